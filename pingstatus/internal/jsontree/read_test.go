package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"pgregory.net/rapid"
)

// stringPieces are pieces of the text of JSON strings: escapes, surrogate
// pairs and halves, runes that fold alike, invalid UTF-8.
var stringPieces = []string{
	`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\uD83D`, `\uDE00`, `\uD83D\uDE00`, `\udbff\udfff`, `\uDC00`,
	`\u0000`, `\u017F`, `\u212A`, `\uFFFD`, "a", "s", "K", "é", "\u212a", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x7f",
}

// syntaxPieces are pieces of JSON's syntax, and of its mistakes.
var syntaxPieces = []string{
	`"`, `\`, `\u`, `\x`, `\'`, "0", "1", "9", "A", "f", "F", "{", "}", "[", "]", ":", ",", " ", "\t", "\n", "\r",
	"-", "+", ".", "e", "E", "true", "false", "null", "tru", "nul", "\x00", "\x1f",
}

// jsonText draws text from an alphabet in which JSON's syntax, and its
// mistakes, are likely; with stringy, mostly the text of a JSON string.
func jsonText(stringy bool) *rapid.Generator[[]byte] {
	type piece struct{ what, which int }
	pieces := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) piece {
		return piece{rapid.IntRange(0, 39).Draw(t, "what"), rapid.IntRange(0, 255).Draw(t, "which")}
	}), 0, 24)
	return rapid.Custom(func(t *rapid.T) []byte {
		var b []byte
		for _, p := range pieces.Draw(t, "pieces") {
			switch r := p.what; {
			case r == 0:
				b = append(b, byte(p.which))
			case stringy && r > 1, !stringy && r > 30:
				b = append(b, stringPieces[p.which%len(stringPieces)]...)
			default:
				b = append(b, syntaxPieces[p.which%len(syntaxPieces)]...)
			}
		}
		return b
	})
}

// TestPropertyUnquoteIsEncodingJSONs: the tree takes a quoted text as a
// JSON string exactly when encoding/json does, and unquote reads it as
// encoding/json decodes it: escapes, surrogate pairs and halves of them,
// invalid UTF-8 as U+FFFD.
func TestPropertyUnquoteIsEncodingJSONs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		quoted := append(append([]byte{'"'}, jsonText(true).Draw(t, "text")...), '"')
		end, ok := stringEnd(quoted, 0)
		isString := ok && end == len(quoted)
		var want string
		err := json.Unmarshal(quoted, &want)
		if isString != (err == nil) {
			t.Fatalf("%q: the tree takes it as a string: %v; encoding/json: %v", quoted, isString, err)
		}
		if isString {
			if got := Unquote(quoted); got != want {
				t.Fatalf("Unquote(%q) = %q, encoding/json decodes %q", quoted, got, want)
			}
		}
	})
}

// syntaxOfEncodingJSON says why text is no JSON object as encoding/json
// tells it: the words the reader's SyntaxError has, or "" for none.
func syntaxOfEncodingJSON(text []byte) string {
	if json.Valid(text) {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	var first json.RawMessage
	switch err := dec.Decode(&first); {
	case err == nil:
		return SyntaxError{follows: dec.InputOffset()}.String()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return SyntaxError{ends: true}.String()
	}
	return SyntaxError{}.String()
}

// TestPropertyTreeReadsAsEncodingJSON: the tree reader takes a body that
// starts with '{' exactly when encoding/json takes it, and says why not
// as encoding/json's decoder tells it; with NaN and the infinities where a
// value may stand, it reads what encoding/json reads with false there,
// and says where the object ends as if false were there.
func TestPropertyTreeReadsAsEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := jsonText(false).Draw(t, "text")
		for _, token := range nonFiniteTokens {
			if bytes.Contains(text, []byte(token)) {
				t.Skip("a non-finite token where it may be in a string")
			}
		}
		body, fixed := []byte("{"), []byte("{")
		if rapid.Bool().Draw(t, "non-finite") {
			a, b := rapid.SampledFrom(nonFiniteTokens[:]).Draw(t, "a"), rapid.SampledFrom(nonFiniteTokens[:]).Draw(t, "b")
			body = fmt.Appendf(nil, `{"a":%s,"b":[%s,1],`, a, b)
			fixed = []byte(`{"a":false,"b":[false,1],`)
		}
		body, fixed = append(body, text...), append(fixed, text...)
		tr, problem := Read(body)
		got := ""
		if problem != nil {
			got = problem.String()
		}
		if want := syntaxOfEncodingJSON(fixed); got != want {
			t.Fatalf("%q: the tree reader says %q, encoding/json %q (of %q)", body, got, want, fixed)
		}
		if problem == nil && (tr.nodes[0].kind != Object || int(tr.nodes[0].end) > len(body)) {
			t.Fatalf("%q: the tree's first node is %+v", body, tr.nodes[0])
		}
	})
}
