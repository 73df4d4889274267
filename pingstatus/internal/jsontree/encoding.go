package jsontree

import (
	"encoding/binary"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// UTF8Text returns body as UTF-8 text: without a UTF-8 byte order mark
// (which RFC 8259 lets a reader ignore), and decoded when it is UTF-16 or
// UTF-32, as told by a byte order mark or by a '{' with zero bytes beside
// it (RFC 4627, section 3). encoding names what it was decoded from, or is
// "" for UTF-8. It allocates only to decode.
func UTF8Text(body []byte) (out []byte, encoding string) {
	b := body
	switch {
	case hasPrefix(b, "\xEF\xBB\xBF"):
		return b[3:], ""
	case hasPrefix(b, "\xFF\xFE\x00\x00"):
		return decodeUTF32(b[4:], binary.LittleEndian), "UTF-32 (little-endian)"
	case hasPrefix(b, "\x00\x00\xFE\xFF"):
		return decodeUTF32(b[4:], binary.BigEndian), "UTF-32 (big-endian)"
	case hasPrefix(b, "\xFF\xFE"):
		return decodeUTF16(b[2:], binary.LittleEndian), "UTF-16 (little-endian)"
	case hasPrefix(b, "\xFE\xFF"):
		return decodeUTF16(b[2:], binary.BigEndian), "UTF-16 (big-endian)"
	case hasPrefix(b, "{\x00\x00\x00"):
		return decodeUTF32(b, binary.LittleEndian), "UTF-32 (little-endian)"
	case hasPrefix(b, "\x00\x00\x00{"):
		return decodeUTF32(b, binary.BigEndian), "UTF-32 (big-endian)"
	case hasPrefix(b, "{\x00"):
		return decodeUTF16(b, binary.LittleEndian), "UTF-16 (little-endian)"
	case hasPrefix(b, "\x00{"):
		return decodeUTF16(b, binary.BigEndian), "UTF-16 (big-endian)"
	}
	return body, ""
}

// MaybeNotUTF8 reports whether a body that starts with c may be one that
// UTF8Text changes: a byte order mark, or UTF-16 or UTF-32 text.
func MaybeNotUTF8(c byte) bool {
	return c == 0xEF || c == 0xFF || c == 0xFE || c == 0 || c == '{'
}

func hasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// decodeUTF16 returns b, UTF-16 text in order, as UTF-8. Unpaired
// surrogates and an odd last byte become U+FFFD.
func decodeUTF16(b []byte, order binary.ByteOrder) []byte {
	out := make([]byte, 0, len(b)/2+8)
	for i := 0; i < len(b); i += 2 {
		if i+1 == len(b) {
			out = utf8.AppendRune(out, utf8.RuneError)
			break
		}
		r := rune(order.Uint16(b[i:]))
		if utf16.IsSurrogate(r) {
			pair := utf8.RuneError
			if i+3 < len(b) {
				pair = utf16.DecodeRune(r, rune(order.Uint16(b[i+2:])))
			}
			if pair != utf8.RuneError {
				i += 2
			}
			r = pair
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// decodeUTF32 returns b, UTF-32 text in order, as UTF-8. Code points that
// are not Unicode characters and trailing bytes become U+FFFD.
func decodeUTF32(b []byte, order binary.ByteOrder) []byte {
	out := make([]byte, 0, len(b)/4+8)
	for i := 0; i < len(b); i += 4 {
		r := utf8.RuneError
		if i+3 < len(b) {
			if c := order.Uint32(b[i:]); c <= unicode.MaxRune && utf8.ValidRune(rune(c)) {
				r = rune(c)
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}
