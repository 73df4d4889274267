package pingstatus

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The light scanning of JSON text that the walk and the field-by-field
// decode share: over text that is JSON (but for the non-finite numbers
// the walk notes), in one pass, never failing, neither checking nor
// copying what they pass over.

// isDelimiter reports whether c may follow a JSON value.
func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ']', '}', ':':
		return true
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// stringEnd returns the index just after the JSON string that starts at
// b[i], a '"', or len(b) if it does not end.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			break
		}
		j += i
		backslashes := 0
		for k := j - 1; k >= i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return j + 1
		}
		i = j + 1
	}
	return len(b)
}

// unquote returns the text of the JSON string quoted, as encoding/json
// reads it (invalid UTF-8 as U+FFFD), or quoted itself when it is no JSON
// string (the decoder refuses the body then).
func unquote(quoted []byte) string {
	if len(quoted) >= 2 && bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted) {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return string(quoted)
	}
	return s
}

// fieldIndex returns the index in names of the field that the quoted key
// names, matched as encoding/json matches it (exactly, or else without
// regard to case, after unescaping), or -1.
func fieldIndex(quoted []byte, names []string) int {
	if len(quoted) < 2 || len(quoted) > maxKeyBytes {
		return -1
	}
	key := quoted[1 : len(quoted)-1]
	for k, name := range names {
		if string(key) == name {
			return k
		}
	}
	if bytes.IndexByte(key, '\\') >= 0 {
		var s string
		if json.Unmarshal(quoted, &s) != nil {
			return -1
		}
		key = []byte(s)
	}
	for k, name := range names {
		if bytes.EqualFold(key, []byte(name)) {
			return k
		}
	}
	return -1
}

// objectCount returns the number of entries of raw if it is a JSON
// object, or 0, decoding nothing.
func objectCount(raw json.RawMessage) int {
	if len(raw) == 0 || raw[0] != '{' {
		return 0
	}
	return entryCount(raw)
}

// arrayItems returns the items of raw, a JSON array in a body known to be
// JSON, as parts of raw, neither checked nor copied.
func arrayItems(raw json.RawMessage) []json.RawMessage {
	w := walker{b: raw, i: 1}
	var items []json.RawMessage
	for ; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] == ']' {
			return items
		}
		start := w.i
		w.skip()
		items = append(items, raw[start:w.i])
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			return items
		}
	}
}

// members calls yield with the quoted key and the value of each member of
// raw, a JSON object in a body known to be JSON, in order, the value a
// part of raw, neither checked nor copied.
func members(raw json.RawMessage, yield func(key []byte, value json.RawMessage)) {
	w := walker{b: raw, i: 1}
	for ; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return
		}
		start := w.i
		w.i = stringEnd(w.b, w.i)
		key := w.b[start:w.i]
		w.space()
		w.i++ // ':'
		w.space()
		value := w.i
		w.skip()
		yield(key, raw[value:w.i])
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			return
		}
	}
}

// entryCount returns the number of entries of raw, a JSON value, if it is
// a list or an object, or 0; it decodes nothing, so that a list over its
// limit costs no more than reading it.
func entryCount(raw json.RawMessage) int {
	if len(raw) == 0 || raw[0] != '[' && raw[0] != '{' {
		return 0
	}
	object := raw[0] == '{'
	w := walker{b: raw, i: 1}
	n := 0
	for ; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] == ']' || w.b[w.i] == '}' {
			return n
		}
		if object { // a key, then ':'
			w.skip()
			w.space()
			w.i++
			w.space()
		}
		w.skip()
		n++
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			return n
		}
	}
}
