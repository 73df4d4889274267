package pingstatus

import (
	"bytes"
	"slices"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/pingnode/pingnode/internal/text"
)

// Near misses (rule 19): an unknown key that looks like a known field
// misspelled, or like a known field of another level. The walker asks
// only of keys that name no field of their level, so a clean reply pays
// nothing; each question compares the key with the few fields of one or
// two levels, on at most maxMissRunes characters, and allocates nothing
// unless it finds one.

// A miss is an unknown key of an object that Parse reads which looks like
// a known field: misspelled at its own level (near), or one of another
// level (misplaced).
type miss struct {
	at        where // the object that holds the key
	reply     bool  // the object is the reply itself
	off       int   // where the key starts in the body
	key       string
	meantLv   level // the level and index of the field meant
	meantK    int
	misplaced bool
}

const (
	// maxNearMisses is the most near-miss warnings one reply gets; one
	// more says how many were left out. The walk keeps only these, and
	// of the others where they are.
	maxNearMisses = 16
	// minEditLen is the length a field must have for a key one edit
	// away from it to be a near miss; shorter fields have too many
	// unrelated neighbours ("pods" and "pids").
	minEditLen = 5
	// maxMissRunes is the longest key that can be a near miss: the
	// longest field (ephemeralStorage) and "ies" for its last letter.
	maxMissRunes = len("ephemeralStorage") + 2
)

// lowerFields are levelFields in lower case, as near misses compare them.
var lowerFields = func() (lower [len(levelFields)][]string) {
	for lv, names := range levelFields {
		for _, name := range names {
			b := []byte(name)
			for i, c := range b {
				if 'A' <= c && c <= 'Z' {
					b[i] = c + 'a' - 'A'
				}
			}
			lower[lv] = append(lower[lv], string(b))
		}
	}
	return lower
}()

// misplacedAt are, for each level, the levels whose fields are warned
// when met there: the reply's own fields under resources and in a device
// group, and resources' fields at the top of the reply. The reply's
// status is never meant elsewhere, nor anything at its top level meant as
// a device group's field ("count", "capacity" are words of many replies).
var misplacedAt = [len(levelFields)][]level{
	replyLevel:     {resourcesLevel},
	resourcesLevel: {replyLevel},
	deviceLevel:    {replyLevel},
}

// nearField returns the field that the unknown key at level lv looks
// like, and whether it is of another level (misplaced); ok is false when
// it looks like none.
func nearField(key []byte, lv level) (meantLv level, meantK int, misplaced, ok bool) {
	var buf [maxMissRunes]rune
	a, fits := foldedRunes(key, &buf)
	if !fits {
		return 0, 0, false, false
	}
	for _, other := range misplacedAt[lv] {
		for k, name := range lowerFields[other] {
			if (other != replyLevel || k != statusField) && equalRunes(a, name, "") {
				return other, k, true, true
			}
		}
	}
	for k, name := range lowerFields[lv] {
		if lv == replyLevel && k == statusField {
			continue // for logs only; "state" and "stats" are common unrelated keys
		}
		if isPlural(a, name) || len(name) >= minEditLen && oneEdit(a, name) {
			return lv, k, false, true
		}
	}
	return 0, 0, false, false
}

// foldedRunes returns key's runes in buf, each folded to lower case and to
// the ASCII letter it folds to, if any (U+017F, long s, is s, as
// encoding/json matches it), or false if key has more than len(buf).
func foldedRunes(key []byte, buf *[maxMissRunes]rune) ([]rune, bool) {
	n := 0
	for len(key) > 0 {
		r, size := utf8.DecodeRune(key)
		key = key[size:]
		if n == len(buf) {
			return nil, false
		}
		switch {
		case 'A' <= r && r <= 'Z':
			r += 'a' - 'A'
		case r >= utf8.RuneSelf:
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				if f < utf8.RuneSelf {
					r = unicode.ToLower(f)
					break
				}
			}
		}
		buf[n] = r
		n++
	}
	return buf[:n], true
}

// equalRunes reports whether a is name followed by suffix.
func equalRunes(a []rune, name, suffix string) bool {
	if len(a) != len(name)+len(suffix) {
		return false
	}
	for i, r := range a {
		var want byte
		if i < len(name) {
			want = name[i]
		} else {
			want = suffix[i-len(name)]
		}
		if r != rune(want) {
			return false
		}
	}
	return true
}

// isPlural reports whether a is name with "s" or "es" added or taken
// away, or with a final "y" as "ies" or the other way round.
func isPlural(a []rune, name string) bool {
	cut := func(suffix string) (string, bool) {
		if len(name) > len(suffix) && name[len(name)-len(suffix):] == suffix {
			return name[:len(name)-len(suffix)], true
		}
		return "", false
	}
	if equalRunes(a, name, "s") || equalRunes(a, name, "es") {
		return true
	}
	if stem, ok := cut("es"); ok && equalRunes(a, stem, "") {
		return true
	}
	if stem, ok := cut("s"); ok && equalRunes(a, stem, "") {
		return true
	}
	if stem, ok := cut("y"); ok && equalRunes(a, stem, "ies") {
		return true
	}
	if stem, ok := cut("ies"); ok && equalRunes(a, stem, "y") {
		return true
	}
	return false
}

// oneEdit reports whether a becomes name by one insertion, deletion or
// substitution of a character, or by swapping two adjacent ones.
func oneEdit(a []rune, name string) bool {
	n, m := len(a), len(name)
	i := 0 // the common prefix
	for i < n && i < m && a[i] == rune(name[i]) {
		i++
	}
	rest := func(ai, ni int) bool { return equalRunes(a[ai:], name[ni:], "") }
	switch n - m {
	case 0:
		if i == n {
			return false // the same: a known field, never a miss
		}
		return rest(i+1, i+1) ||
			i+1 < n && a[i] == rune(name[i+1]) && a[i+1] == rune(name[i]) && rest(i+2, i+2)
	case 1:
		return rest(i+1, i)
	case -1:
		return rest(i, i+1)
	}
	return false
}

// unknownKey notes the key quoted, which names no field of the object at
// level lv at path at, if it is a near miss.
func (w *walker) unknownKey(at where, lv level, off int, quoted []byte) {
	if len(quoted) < 2 || len(quoted) > 2+6*maxMissRunes {
		return
	}
	key := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		key = []byte(unquote(quoted))
	}
	meantLv, meantK, misplaced, ok := nearField(key, lv)
	switch {
	case !ok:
	case len(w.misses) < maxNearMisses:
		w.misses = append(w.misses, miss{
			at: at, reply: lv == replyLevel, off: off, key: unquote(quoted),
			meantLv: meantLv, meantK: meantK, misplaced: misplaced,
		})
	default: // only counted, but where, so that dropMisses can forget it
		w.moreMisses = append(w.moreMisses, off)
	}
}

// dropMisses forgets the misses whose keys lie in w.b[from:to], a value
// that Parse passes over (the earlier value of a repeated key, a list
// over its limit).
func (w *walker) dropMisses(from, to int) {
	lo := sort.Search(len(w.misses), func(i int) bool { return w.misses[i].off >= from })
	hi := lo + sort.Search(len(w.misses)-lo, func(i int) bool { return w.misses[lo+i].off >= to })
	if lo < hi {
		w.misses = append(w.misses[:lo], w.misses[hi:]...)
	}
	lo, _ = slices.BinarySearch(w.moreMisses, from)
	hi, _ = slices.BinarySearch(w.moreMisses, to)
	if lo < hi {
		w.moreMisses = append(w.moreMisses[:lo], w.moreMisses[hi:]...)
	}
}

// path returns the path of the key, as a warning names it: "device",
// "resources.devices", "devices[0].attribute", the key quoted and cut
// when it is not plain printable text.
func (m miss) path() string {
	key := m.key
	for i := range len(key) {
		if c := key[i]; c <= ' ' || c > '~' || c == '.' || c == '[' || c == ']' || c == '"' || c == '\\' {
			key = text.Quote(key, quoteBytes)
			break
		}
	}
	if key == "" {
		key = `""`
	}
	if m.reply {
		return key
	}
	return m.at.String() + "." + key
}

// warning returns the warning about m.
func (m miss) warning() Warning {
	name := levelFields[m.meantLv][m.meantK]
	msg := "unknown field; did you mean \"" + name + "\"? ignored"
	switch {
	case m.misplaced && m.meantLv == replyLevel:
		msg = "\"" + name + "\" belongs at the top level of the reply; ignored"
	case m.misplaced:
		msg = "\"" + name + "\" belongs in \"resources\"; ignored"
	}
	return Warning{Path: m.path(), Message: msg, Subject: fieldSubject(m.meantLv, m.meantK), Action: Ignored}
}

// fieldSubject returns what part of the node the k-th field of level lv
// is about.
func fieldSubject(lv level, k int) Subject {
	switch lv {
	case replyLevel:
		return nowhere.child(replyLevel, k).subject()
	case resourcesLevel, acceleratorLevel:
		return SubjectResource
	case taintLevel:
		return SubjectTaint
	}
	return SubjectDevice
}

// nearMisses warns of the misses of a walk, and of how many more it
// counted.
func (p *parser) nearMisses(w *walker) {
	for _, m := range w.misses {
		p.warnings = append(p.warnings, m.warning())
	}
	if n := len(w.moreMisses); n > 0 {
		p.warn(SubjectReply, Ignored, "", "%d more unknown fields look like misspelled or misplaced known fields; ignored", n)
	}
}
