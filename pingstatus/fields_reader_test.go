package pingstatus

import (
	"encoding/json"
	"fmt"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

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
				t.Errorf("%s imports encoding/json: the tree (internal/jsontree) is the reply's only reader", name)
			}
		}
	}
}
