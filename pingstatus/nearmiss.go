package pingstatus

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
)

// Near misses (rule key-near-miss): an unknown key that looks like a known field
// misspelled, or like a known field of another level. The key judge
// (keys.go) asks only of keys that name no field of their level, so a
// clean reply pays nothing; each question compares the key with the few
// fields of one or two levels, on at most maxMissRunes characters, and
// allocates nothing unless it finds one.

const (
	// maxNearMisses is the most near-miss warnings one reply gets; one
	// more says how many were left out. The key judge keeps only these,
	// and counts the others.
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
	partLevel:      {resourcesLevel, replyLevel},
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
		// "nodes" is one edit from words of many replies ("notes",
		// "codes", "modes"); its near miss is "node" alone.
		edits := len(name) >= minEditLen && (lv != replyLevel || k != nodesField)
		if isPlural(a, name) || edits && oneEdit(a, name) {
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

// unknownKey notes the key of the member m, which names no field of the
// object at level lv at path at, if it is a near miss.
func (j *keyJudge) unknownKey(m int, at where, lv level) {
	quoted := j.t.Key(m)
	if len(quoted) > 2+6*maxMissRunes {
		return
	}
	key := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		key = []byte(jsontree.Unquote(quoted))
	}
	meantLv, meantK, misplaced, ok := nearField(key, lv)
	switch {
	case !ok:
	case len(j.misses) < maxNearMisses:
		j.misses = append(j.misses, missWarning(at, lv == replyLevel, jsontree.Unquote(quoted), meantLv, meantK, misplaced, treePartName(j.t, at.partEntry)))
	default:
		j.moreMisses++
	}
}

// missPath returns the path of the unknown key in the object at at (the
// reply itself, if reply), as a warning names it: "device",
// "resources.devices", "devices[0].attribute", the key quoted and cut
// when it is not plain printable text.
func missPath(at where, reply bool, key string) string {
	for i := range len(key) {
		if c := key[i]; c <= ' ' || c > '~' || c == '.' || c == '[' || c == ']' || c == '"' || c == '\\' {
			key = text.Quote(key, quoteBytes)
			break
		}
	}
	if key == "" {
		key = `""`
	}
	if reply {
		return key
	}
	return at.String() + "." + key
}

// missWarning returns the warning about the unknown key in the object at
// at, of the part part ("" for none), which looks like the field meantK
// of level meantLv.
func missWarning(at where, reply bool, key string, meantLv level, meantK int, misplaced bool, part string) Warning {
	name := levelFields[meantLv][meantK]
	msg := "unknown field; did you mean \"" + name + "\"? ignored"
	switch {
	case misplaced && meantLv == replyLevel && at.part >= 0 && meantK != nodesField:
		msg = "\"" + name + "\" belongs in the part's entry, beside \"resources\"; ignored"
	case misplaced && meantLv == replyLevel:
		msg = "\"" + name + "\" belongs at the top level of the reply; ignored"
	case misplaced:
		msg = "\"" + name + "\" belongs in \"resources\"; ignored"
	}
	return Warning{Path: missPath(at, reply, key), Message: msg, Subject: fieldSubject(meantLv, meantK), Action: Ignored, Rule: ruleKeyNearMiss, Part: part}
}

// fieldSubject returns what part of the node the k-th field of level lv
// is about.
func fieldSubject(lv level, k int) Subject {
	switch lv {
	case replyLevel, partLevel:
		at := nowhere
		if lv == partLevel {
			at.part = 0
		}
		return at.child(lv, k).subject()
	case resourcesLevel, acceleratorLevel:
		return SubjectResource
	case taintLevel:
		return SubjectTaint
	}
	return SubjectDevice
}
