package jsontree

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The tokens of the tree (Read): where each ends in the text, by
// JSON's grammar, and what a string's says, as encoding/json reads it.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// space returns the index of the first byte of text from i that is no
// JSON whitespace.
func space(text []byte, i int) int {
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	return i
}

// isDelimiter reports whether c may follow a JSON value.
func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ']', '}', ':':
		return true
	}
	return false
}

// stringEnd returns the index just after the JSON string that starts at
// text[i], a '"', and true; or where it stops being one, and false.
func stringEnd(text []byte, i int) (int, bool) {
	for i++; i < len(text); {
		switch c := text[i]; {
		case c == '"':
			return i + 1, true
		case c < ' ':
			return i, false
		case c != '\\':
			i++
			continue
		}
		i++
		if i >= len(text) {
			return i, false
		}
		switch text[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			i++
			for range 4 {
				if i >= len(text) {
					return i, false
				}
				if !isHex(text[i]) {
					return i, false
				}
				i++
			}
		default:
			return i, false
		}
	}
	return i, false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scalarEnd returns the index just after the JSON number or literal that
// starts at text[i], and its kind; or where it stops being one, and 0.
func scalarEnd(text []byte, i int) (int, Kind) {
	for _, lit := range [...]struct {
		s string
		k Kind
	}{{"true", True}, {"false", False}, {"null", Null}} {
		if text[i] != lit.s[0] {
			continue
		}
		for j := 1; j < len(lit.s); j++ {
			if i+j >= len(text) || text[i+j] != lit.s[j] {
				return i + j, 0
			}
		}
		return i + len(lit.s), lit.k
	}
	// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
	if text[i] == '-' {
		i++
	}
	switch {
	case i >= len(text) || !isDigit(text[i]):
		return i, 0
	case text[i] == '0':
		i++
	default:
		for i < len(text) && isDigit(text[i]) {
			i++
		}
	}
	if i < len(text) && text[i] == '.' {
		i++
		if i >= len(text) || !isDigit(text[i]) {
			return i, 0
		}
		for i < len(text) && isDigit(text[i]) {
			i++
		}
	}
	if i < len(text) && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < len(text) && (text[i] == '+' || text[i] == '-') {
			i++
		}
		if i >= len(text) || !isDigit(text[i]) {
			return i, 0
		}
		for i < len(text) && isDigit(text[i]) {
			i++
		}
	}
	return i, Number
}

// Unquote returns the text of the JSON string quoted, as encoding/json
// decodes it: escapes read, a \u escape of half a surrogate pair that is
// not followed by the other half, and every byte that is not UTF-8, as
// U+FFFD. quoted is a string token of the tree.
func Unquote(quoted []byte) string {
	s := quoted[1 : len(quoted)-1]
	plain := 0
	for plain < len(s) {
		c := s[plain]
		if c == '\\' {
			break
		}
		if c < utf8.RuneSelf {
			plain++
			continue
		}
		r, size := utf8.DecodeRune(s[plain:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		plain += size
	}
	if plain == len(s) {
		return string(s)
	}
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	b = append(b, s[:plain]...)
	for r := plain; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			r++
			switch e := s[r]; e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
							b = utf8.AppendRune(b, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, e)
			}
			r++
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b)
}

// hex4 returns the value of the four hex digits that s starts with, which
// the reader has checked.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// nonFiniteTokens are the spellings of NaN and the infinities that
// serializers write where JSON has no number: Python's json module, Gson and
// JSON5 (NaN, Infinity, -Infinity), and C's printf, awk and shell scripts
// built on them (nan, -nan, inf, -inf).
var nonFiniteTokens = [...]string{"NaN", "Infinity", "-Infinity", "nan", "-nan", "inf", "-inf"}

// nonFiniteAt returns the length of the non-finite number token that b
// starts with, followed by the end of b or by what may follow a value, or 0.
func nonFiniteAt(b []byte) int {
	switch b[0] {
	case 'N', 'I', 'n', 'i', '-':
	default:
		return 0
	}
	for _, t := range nonFiniteTokens {
		if hasPrefix(b, t) && (len(b) == len(t) || isDelimiter(b[len(t)])) {
			return len(t)
		}
	}
	return 0
}
