package pingstatus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	goparser "go/parser"
	"go/token"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
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
			if got := unquote(quoted); got != want {
				t.Fatalf("unquote(%q) = %q, encoding/json decodes %q", quoted, got, want)
			}
		}
	})
}

// syntaxOfEncodingJSON says why text is no JSON object as encoding/json
// tells it: the words the reader's syntaxError has, or "" for none.
func syntaxOfEncodingJSON(text []byte) string {
	if json.Valid(text) {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	var first json.RawMessage
	switch err := dec.Decode(&first); {
	case err == nil:
		return syntaxError{follows: dec.InputOffset()}.String()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return syntaxError{ends: true}.String()
	}
	return syntaxError{}.String()
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
		tr, problem := read(body)
		got := ""
		if problem != nil {
			got = problem.String()
		}
		if want := syntaxOfEncodingJSON(fixed); got != want {
			t.Fatalf("%q: the tree reader says %q, encoding/json %q (of %q)", body, got, want, fixed)
		}
		if problem == nil && (tr.nodes[0].kind != objectKind || int(tr.nodes[0].end) > len(body)) {
			t.Fatalf("%q: the tree's first node is %+v", body, tr.nodes[0])
		}
	})
}

// TestPropertyFieldIndexMatchesEncodingJSON: a key names a field of a
// level, for fieldIndex, exactly when encoding/json decodes it into that
// field of a struct with the level's json tags: spelled in any case, with
// the runes that fold alike (long s, Kelvin sign) or only look alike,
// escaped or not.
func TestPropertyFieldIndexMatchesEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lv := level(rapid.IntRange(0, len(levelFields)-1).Draw(t, "level"))
		names := levelFields[lv]
		name := rapid.SampledFrom(names).Draw(t, "name")
		var key []rune
		for _, class := range spellings(name) {
			switch rapid.IntRange(0, 20).Draw(t, "change") {
			case 0: // another rune
				key = append(key, rapid.SampledFrom([]rune{0x131, 0x130, 0xDF, 0x78, 0x5F, 0xFFFD, 0}).Draw(t, "other"))
			case 1: // none
			default:
				key = append(key, rapid.SampledFrom(class).Draw(t, "rune"))
			}
		}
		var quoted strings.Builder
		quoted.WriteByte('"')
		for _, r := range key {
			if r >= 0x10000 || r < ' ' || rapid.IntRange(0, 3).Draw(t, "escape") == 0 {
				fmt.Fprintf(&quoted, `\u%04x`, r)
			} else {
				quoted.WriteRune(r)
			}
		}
		quoted.WriteByte('"')
		m := reflect.New(rawMirror(lv))
		if err := json.Unmarshal([]byte(`{`+quoted.String()+`:"x"}`), m.Interface()); err != nil {
			t.Fatal(err)
		}
		want := -1
		for k := range names {
			if len(m.Elem().Field(k).Bytes()) > 0 {
				want = k
			}
		}
		if got := fieldIndex([]byte(quoted.String()), names); got != want {
			t.Fatalf("level %d: fieldIndex(%s) = %d, encoding/json decodes it into field %d", lv, quoted.String(), got, want)
		}
	})
}

// TestTreeIsTheOnlyReader: no file of the package but wire.go (whose
// Validate marshals a reply to parse it) uses encoding/json, so that the
// tree is the only reader of a reply and the wire types its only
// description.
func TestTreeIsTheOnlyReader(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "wire.go" {
			continue
		}
		f, err := goparser.ParseFile(token.NewFileSet(), name, nil, goparser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "encoding/json" {
				t.Errorf("%s imports encoding/json: the tree (read.go) is the reply's only reader", name)
			}
		}
	}
}
