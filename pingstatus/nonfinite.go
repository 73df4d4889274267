package pingstatus

// nonFiniteTokens are the spellings of NaN and the infinities that
// serializers write where JSON has no number: Python's json module, Gson and
// JSON5 (NaN, Infinity, -Infinity), and C's printf, awk and shell scripts
// built on them (nan, -nan, inf, -inf).
var nonFiniteTokens = [...]string{"NaN", "Infinity", "-Infinity", "nan", "-nan", "inf", "-inf"}

// nonFiniteAt returns the length of the non-finite number token that b
// starts with, or 0.
func nonFiniteAt(b []byte) int {
	if len(b) == 0 {
		return 0
	}
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

// withoutNonFinite returns body with false in place of every non-finite
// number token that stands where a value may, and how many it replaced. It
// returns body itself when there are none.
func withoutNonFinite(body []byte) ([]byte, int) {
	var out []byte
	n, copied := 0, 0
	prev := byte(0) // the last byte outside strings and spaces
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"':
			i = stringEnd(body, i)
			prev = '"'
			continue
		case isSpace(c):
			i++
			continue
		case prev == ':' || prev == '[' || prev == ',':
			if t := nonFiniteAt(body[i:]); t > 0 {
				if out == nil {
					out = make([]byte, 0, len(body)+len(body)/8)
				}
				out = append(out, body[copied:i]...)
				out = append(out, "false"...)
				i += t
				copied, prev = i, 'e'
				n++
				continue
			}
		}
		prev = c
		i++
	}
	if n == 0 {
		return body, 0
	}
	return append(out, body[copied:]...), n
}
