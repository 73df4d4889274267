package pingstatus

import (
	"bytes"
	"math"
	"slices"
	"strconv"
)

// The syntax of a reply: its text read once, in one pass, into a light
// tree of JSON values, which the rules (rules.go) read and never the text
// again. The reader accepts exactly what encoding/json accepts, and
// besides, where a value may stand, the non-finite numbers that
// serializers write (nonFiniteTokens); it keeps each scalar's token as
// written and each member's key as spelled, repeated keys included, and
// neither decodes nor copies them.

// kind is the kind of a JSON value in the tree.
type kind uint8

const (
	objectKind kind = iota + 1
	arrayKind
	stringKind
	numberKind
	trueKind
	falseKind
	nullKind
	nonFiniteKind // NaN, Infinity and their kin, which JSON does not have
)

// A node is a value of the tree: its text is text[start:end], and, for a
// member of an object, its key is text[keyStart:keyEnd], quotes included.
// An object's or array's entries are its children, n of them, the first
// just after it in the tree (which is in the order of the text), each
// next one along next. Positions are 32 bits, which keeps a node small:
// Parse reads no longer text (maxTextBytes).
type node struct {
	start, end       int32
	keyStart, keyEnd int32
	next             int32 // index in tree.nodes of the next entry of the same container, or -1
	n                int32
	kind             kind
	field            int8 // of a member of an object at a level: 1 + its index in levelFields, -1 for none, 0 until asked
}

// maxTextBytes is the longest text the tree holds.
const maxTextBytes = math.MaxInt32

// A tree is the syntax of a reply body: its nodes in the order of the
// text, the reply object first.
type tree struct {
	text  []byte
	nodes []node
}

// maxDepth is how deep objects and arrays may nest, as in encoding/json.
const maxDepth = 10000

// none stands for no node.
const none = -1

// first returns the first entry of n, or none.
func (t *tree) first(n int) int {
	if t.nodes[n].n == 0 {
		return none
	}
	return n + 1
}

// next returns the entry after the entry n of a container, or none.
func (t *tree) next(n int) int { return int(t.nodes[n].next) }

// len returns the number of entries of n, an object or an array.
func (t *tree) len(n int) int { return int(t.nodes[n].n) }

// token returns the text of the value n.
func (t *tree) token(n int) []byte { return t.text[t.nodes[n].start:t.nodes[n].end] }

// key returns the key of the member n as spelled, quotes included.
func (t *tree) key(n int) []byte { return t.text[t.nodes[n].keyStart:t.nodes[n].keyEnd] }

// field returns the index in levelFields[lv] of the field that the key of
// the member m of an object at level lv names, or -1.
func (t *tree) field(m int, lv level) int {
	n := &t.nodes[m]
	if n.field == 0 {
		n.field = int8(fieldIndex(t.key(m), levelFields[lv]) + 1)
		if n.field == 0 {
			n.field = -1
		}
	}
	if n.field < 0 {
		return -1
	}
	return int(n.field) - 1
}

// fields returns the last value of each field of the object obj at level
// lv, or none.
func (t *tree) fields(obj int, lv level) [maxLevelFields]int {
	f := [maxLevelFields]int{none, none, none, none, none, none, none}
	for m := t.first(obj); m != none; m = t.next(m) {
		if k := t.field(m, lv); k >= 0 {
			f[k] = m
		}
	}
	return f
}

// kind returns the kind of n, or 0 for none.
func (t *tree) kind(n int) kind {
	if n < 0 {
		return 0
	}
	return t.nodes[n].kind
}

// present reports whether n is a value other than null.
func (t *tree) present(n int) bool { return n >= 0 && t.nodes[n].kind != nullKind }

// str returns the text of n, a JSON string, as encoding/json decodes it.
func (t *tree) str(n int) string { return unquote(t.token(n)) }

// quantityText returns the text of a quantity, a string or a number: a
// number's as written, a string's decoded, but for a string without
// escapes, whose bytes are taken as they are (so that a warning shows
// a byte that is not UTF-8 as it was sent).
func (t *tree) quantityText(n int) string {
	raw := t.token(n)
	if t.nodes[n].kind == stringKind && bytes.IndexByte(raw, '\\') >= 0 {
		return unquote(raw)
	}
	if t.nodes[n].kind == stringKind {
		return string(raw[1 : len(raw)-1])
	}
	return string(raw)
}

// A syntaxError says why a body is no JSON object.
type syntaxError struct {
	ends    bool  // it ends before the object does
	follows int64 // something follows the object, which ends there; 0 for none
}

func (e syntaxError) String() string {
	switch {
	case e.ends:
		return "it ends before the object does"
	case e.follows > 0:
		return "something follows the object, which ends at byte " + strconv.FormatInt(e.follows, 10)
	}
	return "it is not valid JSON"
}

// read reads text, which starts with spaces and a '{', into a tree, or
// says why it is no JSON object. Its work is linear in the text, and it
// never recurses.
func read(text []byte) (*tree, *syntaxError) {
	t := &tree{text: text, nodes: make([]node, 0, 16+len(text)/8)}
	var open, last []int // the containers open, and the last child of each
	// How much longer the text read so far is with false for each
	// non-finite token: a warning says where the object ends in that
	// text, as encoding/json read it when Parse gave it that text.
	grown := int64(0)
	i := space(text, 0)
	keyStart, keyEnd := -1, -1
	for {
		// A value at text[i].
		if i >= len(text) {
			return nil, endsEarly()
		}
		n := node{start: int32(i), keyStart: int32(keyStart), keyEnd: int32(keyEnd), next: none}
		keyStart, keyEnd = -1, -1
		c := text[i]
		container := false
		switch c {
		case '{', '[':
			container = true
			n.kind = objectKind
			if c == '[' {
				n.kind = arrayKind
			}
			i++
		case '"':
			j, ok := stringEnd(text, i)
			if !ok {
				return nil, errAt(j, text)
			}
			n.kind, i = stringKind, j
		default:
			if k := nonFiniteAt(text[i:]); k > 0 && len(open) > 0 {
				n.kind, i = nonFiniteKind, i+k
				grown += int64(len("false") - k)
				break
			}
			j, k := scalarEnd(text, i)
			if k == 0 {
				return nil, errAt(j, text)
			}
			n.kind, i = k, j
		}
		if len(t.nodes) == 0 && n.kind != objectKind {
			return nil, notJSON() // unreachable: Parse reads only text that starts with '{'
		}
		if !container {
			n.end = int32(i)
		}
		index := len(t.nodes)
		if index == cap(t.nodes) { // double: append grows a large slice by a quarter, copying it over and over
			t.nodes = slices.Grow(t.nodes, index)
		}
		t.nodes = append(t.nodes, n)
		if top := len(open) - 1; top >= 0 {
			if last[top] >= 0 {
				t.nodes[last[top]].next = int32(index)
			}
			last[top] = index
			t.nodes[open[top]].n++
		}
		if container {
			if len(open) == maxDepth {
				return nil, notJSON()
			}
			open, last = append(open, index), append(last, none)
		}
		// What follows the value: an entry of the container open, its
		// end, or the end of the text.
		expectEntry := container
		for {
			i = space(text, i)
			top := len(open) - 1
			if top < 0 {
				if i < len(text) {
					return nil, &syntaxError{follows: int64(t.nodes[0].end) + grown}
				}
				return t, nil
			}
			if i >= len(text) {
				return nil, endsEarly()
			}
			isObject := t.nodes[open[top]].kind == objectKind
			c := text[i]
			switch {
			case expectEntry && isObject && c == '}', expectEntry && !isObject && c == ']':
			case expectEntry:
				goto entry
			case c == ',':
				i = space(text, i+1)
				goto entry
			case isObject && c != '}', !isObject && c != ']':
				return nil, notJSON()
			}
			// The end of the container open.
			i++
			t.nodes[open[top]].end = int32(i)
			open, last = open[:top], last[:top]
			expectEntry = false
		}
	entry:
		if t.nodes[open[len(open)-1]].kind == objectKind {
			if i >= len(text) {
				return nil, endsEarly()
			}
			if text[i] != '"' {
				return nil, notJSON()
			}
			j, ok := stringEnd(text, i)
			if !ok {
				return nil, errAt(j, text)
			}
			keyStart, keyEnd = i, j
			i = space(text, j)
			if i >= len(text) {
				return nil, endsEarly()
			}
			if text[i] != ':' {
				return nil, notJSON()
			}
			i = space(text, i+1)
		}
	}
}

// endsEarly says that a text ends before its object does.
func endsEarly() *syntaxError { return &syntaxError{ends: true} }

// notJSON says that a text is not JSON.
func notJSON() *syntaxError { return &syntaxError{} }

// errAt returns why a text is no JSON object when a token stopped at j:
// it ends early if j is its end, and is no JSON otherwise.
func errAt(j int, text []byte) *syntaxError {
	if j >= len(text) {
		return endsEarly()
	}
	return notJSON()
}
