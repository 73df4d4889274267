package jsontree

import (
	"bytes"
	"math"
	"slices"
	"strconv"
)

// Kind is the kind of a JSON value in the tree.
type Kind uint8

// The kinds of values.
const (
	Object Kind = iota + 1
	Array
	String
	Number
	True
	False
	Null
	NonFinite // NaN, Infinity and their kin, which JSON does not have
)

// A node is a value of the tree: its text is text[start:end], and, for a
// member of an object, its key is text[keyStart:keyEnd], quotes included.
// An object's or array's entries are its children, n of them, the first
// just after it in the tree (which is in the order of the text), each
// next one along next. Positions are 32 bits, which keeps a node small:
// Read takes no longer text (MaxTextBytes).
type node struct {
	start, end       int32
	keyStart, keyEnd int32
	next             int32 // index in Tree.nodes of the next entry of the same container, or None
	n                int32
	kind             Kind
	mark             int8 // the reader's own mark (Tree.Mark), 0 until set
}

// MaxTextBytes is the longest text the tree holds.
const MaxTextBytes = math.MaxInt32

// A Tree is the syntax of a JSON text: its values in the order of the
// text, the first one at index 0. A value is named by its index.
type Tree struct {
	text  []byte
	nodes []node
}

// maxDepth is how deep objects and arrays may nest, as in encoding/json.
const maxDepth = 10000

// None stands for no value.
const None = -1

// First returns the first entry of n, or None.
func (t *Tree) First(n int) int {
	if t.nodes[n].n == 0 {
		return None
	}
	return n + 1
}

// Next returns the entry after the entry n of a container, or None.
func (t *Tree) Next(n int) int { return int(t.nodes[n].next) }

// Len returns the number of entries of n, an object or an array.
func (t *Tree) Len(n int) int { return int(t.nodes[n].n) }

// Token returns the text of the value n.
func (t *Tree) Token(n int) []byte { return t.text[t.nodes[n].start:t.nodes[n].end] }

// Key returns the key of the member n as spelled, quotes included.
func (t *Tree) Key(n int) []byte { return t.text[t.nodes[n].keyStart:t.nodes[n].keyEnd] }

// Mark returns the mark the reader set on n, 0 until it sets one.
func (t *Tree) Mark(n int) int8 { return t.nodes[n].mark }

// SetMark sets the reader's mark of n.
func (t *Tree) SetMark(n int, mark int8) { t.nodes[n].mark = mark }

// Kind returns the kind of n, or 0 for None.
func (t *Tree) Kind(n int) Kind {
	if n < 0 {
		return 0
	}
	return t.nodes[n].kind
}

// Present reports whether n is a value other than null.
func (t *Tree) Present(n int) bool { return n >= 0 && t.nodes[n].kind != Null }

// Str returns the text of n, a JSON string, as encoding/json decodes it.
func (t *Tree) Str(n int) string { return Unquote(t.Token(n)) }

// QuantityText returns the text of a quantity, a string or a number: a
// number's as written, a string's decoded, but for a string without
// escapes, whose bytes are taken as they are (so that a warning shows
// a byte that is not UTF-8 as it was sent).
func (t *Tree) QuantityText(n int) string {
	raw := t.Token(n)
	if t.nodes[n].kind == String && bytes.IndexByte(raw, '\\') >= 0 {
		return Unquote(raw)
	}
	if t.nodes[n].kind == String {
		return string(raw[1 : len(raw)-1])
	}
	return string(raw)
}

// A SyntaxError says why a text is no JSON object.
type SyntaxError struct {
	ends    bool  // it ends before the object does
	follows int64 // something follows the object, which ends there; 0 for none
}

func (e SyntaxError) String() string {
	switch {
	case e.ends:
		return "it ends before the object does"
	case e.follows > 0:
		return "something follows the object, which ends at byte " + strconv.FormatInt(e.follows, 10)
	}
	return "it is not valid JSON"
}

// Read reads text, which starts with spaces and a '{', into a tree, or
// says why it is no JSON object. Its work is linear in the text, and it
// never recurses.
func Read(text []byte) (*Tree, *SyntaxError) {
	t := &Tree{text: text, nodes: make([]node, 0, 16+len(text)/8)}
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
		n := node{start: int32(i), keyStart: int32(keyStart), keyEnd: int32(keyEnd), next: None}
		keyStart, keyEnd = -1, -1
		c := text[i]
		container := false
		switch c {
		case '{', '[':
			container = true
			n.kind = Object
			if c == '[' {
				n.kind = Array
			}
			i++
		case '"':
			j, ok := stringEnd(text, i)
			if !ok {
				return nil, errAt(j, text)
			}
			n.kind, i = String, j
		default:
			if k := nonFiniteAt(text[i:]); k > 0 && len(open) > 0 {
				n.kind, i = NonFinite, i+k
				grown += int64(len("false") - k)
				break
			}
			j, k := scalarEnd(text, i)
			if k == 0 {
				return nil, errAt(j, text)
			}
			n.kind, i = k, j
		}
		if len(t.nodes) == 0 && n.kind != Object {
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
			open, last = append(open, index), append(last, None)
		}
		// What follows the value: an entry of the container open, its
		// end, or the end of the text.
		expectEntry := container
		for {
			i = space(text, i)
			top := len(open) - 1
			if top < 0 {
				if i < len(text) {
					return nil, &SyntaxError{follows: int64(t.nodes[0].end) + grown}
				}
				return t, nil
			}
			if i >= len(text) {
				return nil, endsEarly()
			}
			isObject := t.nodes[open[top]].kind == Object
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
		if t.nodes[open[len(open)-1]].kind == Object {
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
func endsEarly() *SyntaxError { return &SyntaxError{ends: true} }

// notJSON says that a text is not JSON.
func notJSON() *SyntaxError { return &SyntaxError{} }

// errAt returns why a text is no JSON object when a token stopped at j:
// it ends early if j is its end, and is no JSON otherwise.
func errAt(j int, text []byte) *SyntaxError {
	if j >= len(text) {
		return endsEarly()
	}
	return notJSON()
}
