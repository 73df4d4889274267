package text

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"clean and short is kept", "HTTP 500", 64, "HTTP 500"},
		{"whitespace controls become spaces", "a\tb\nc\r\n", 64, "a b c  "},
		{"other controls are replaced", "a\x00b\x1bc\u0085", 64, "a\uFFFDb\uFFFDc\uFFFD"},
		{"invalid bytes are replaced", "a\xffb\xc3", 64, "a\uFFFDb\uFFFD"},
		// h(1) é(2) l(1) l(1): 5 bytes, then the 3-byte marker makes 8.
		{"cut at a character boundary, marker counted", "héllo wörld", 8, "héll…"},
		// é is 2 bytes: "h" + "é" + "…" is 6 > 5, so only "h" fits.
		{"a character that does not fit whole is left out", "héllo", 5, "h…"},
		{"exactly max is not cut", "abcd", 4, "abcd"},
		{"max below the marker gives nothing", "abcdef", 2, ""},
		{"a replacement can push it over", "ab\xff", 4, "a…"},
		{"empty", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, tt.max); got != tt.want {
				t.Errorf("Clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"short", `a"b`, 10, `"a\"b"`},
		{"controls escaped", "a\nb\x00", 10, `"a\nb\x00"`},
		{"cut at a character boundary", "héllo", 2, `"h"…`},
		{"cut after a whole character", "héllo", 3, `"hé"…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quote(tt.in, tt.max); got != tt.want {
				t.Errorf("Quote(%q, %d) = %s, want %s", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

func TestPropertyClean(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.String(), rapid.StringN(0, 64, -1), rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) })).Draw(t, "s")
		max := rapid.IntRange(-1, 80).Draw(t, "max")
		got := Clean(s, max)
		if len(got) > max && got != "" {
			t.Fatalf("Clean(%q, %d) = %q: %d bytes, over the bound", s, max, got, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q, %d) = %q: not valid UTF-8", s, max, got)
		}
		if strings.IndexFunc(got, unicode.IsControl) >= 0 {
			t.Fatalf("Clean(%q, %d) = %q: has a control character", s, max, got)
		}
		if again := Clean(got, max); again != got {
			t.Fatalf("Clean is not idempotent: %q, then %q", got, again)
		}
		if isClean(s) && len(s) <= max && got != s {
			t.Fatalf("Clean(%q, %d) = %q: changed a clean string within the bound", s, max, got)
		}
		if body, cut := strings.CutSuffix(got, CutMarker); cut && !strings.HasSuffix(s, CutMarker) {
			if !strings.HasPrefix(Clean(s, len(s)*3+3), body) {
				t.Fatalf("Clean(%q, %d) = %q: not a prefix of the cleaned string", s, max, got)
			}
		}
	})
}

func TestCleanDoesNotAllocateWhenClean(t *testing.T) {
	s := "the plugin answered HTTP 503 Service Unavailable"
	if n := testing.AllocsPerRun(100, func() { _ = Clean(s, 256) }); n != 0 {
		t.Errorf("Clean of a clean string made %v allocations, want 0", n)
	}
}
