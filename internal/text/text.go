// Package text makes strings taken from a plugin safe to put on a node or
// in a log: bounded in bytes, valid UTF-8, and free of control characters.
package text

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// CutMarker ends a string that [Clean] cut short.
const CutMarker = "…"

// Clean returns s as valid UTF-8 without control characters, at most max
// bytes long. Tabs, newlines and carriage returns become spaces (a JSON body
// stays JSON); other control characters and invalid bytes become U+FFFD.
// When the result would be longer than max, it is cut at a character
// boundary and ends with [CutMarker], the marker counted in max. A max
// below the marker's length gives "". Clean allocates only when s needs a
// change.
func Clean(s string, max int) string {
	if max < 0 {
		max = 0
	}
	if len(s) <= max && isClean(s) {
		return s
	}
	limit := max
	if !fits(s, max) {
		limit = max - len(CutMarker)
	}
	b := make([]byte, 0, min(len(s), max))
	cut := false
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				r = unicode.ReplacementChar // an invalid byte
			}
		}
		r = cleanRune(r)
		if len(b)+utf8.RuneLen(r) > limit {
			cut = true
			break
		}
		b = utf8.AppendRune(b, r)
	}
	if cut && limit >= 0 {
		b = append(b, CutMarker...)
	}
	return string(b)
}

// Quote returns s as a Go double-quoted string (control characters,
// invalid bytes and quotes escaped), its content cut at a character
// boundary to at most max bytes of s with [CutMarker] after the closing
// quote when it was cut.
func Quote(s string, max int) string {
	if max < 0 {
		max = 0
	}
	if len(s) <= max {
		return strconv.Quote(s)
	}
	end := max
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return strconv.Quote(s[:end]) + CutMarker
}

// fits reports whether s, cleaned, is at most max bytes long.
func fits(s string, max int) bool {
	n := 0
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				r = unicode.ReplacementChar
			}
		}
		n += utf8.RuneLen(cleanRune(r))
		if n > max {
			return false
		}
	}
	return true
}

func isClean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if cleanRune(r) != r {
			return false
		}
	}
	return true
}

func cleanRune(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return ' '
	case unicode.IsControl(r):
		return unicode.ReplacementChar
	}
	return r
}
