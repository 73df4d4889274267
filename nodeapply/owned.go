package nodeapply

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
)

// The ownership annotation lists the taints the plugin set, as kubectl
// names them (key:Effect), separated by commas, in the order they stand in
// spec.taints: "vendor.io/maintenance:NoSchedule,example.com/drain:NoExecute".
// Neither a taint key nor an effect can hold a comma or a colon, so the
// format is unambiguous.

// ownedCursor walks an ownership annotation entry by entry, without
// allocating.
type ownedCursor struct {
	rest string
	done bool
}

func newOwnedCursor(annotation string) ownedCursor {
	return ownedCursor{rest: annotation, done: annotation == ""}
}

// peek returns the current entry, whether it names a valid taint
// (key:Effect), and whether there was an entry at all.
func (c *ownedCursor) peek() (id kuberules.TaintID, ok, more bool) {
	if c.done {
		return id, false, false
	}
	id, ok = parseOwned(c.entry())
	return id, ok, true
}

// entry returns the current entry's text.
func (c *ownedCursor) entry() string {
	entry, _, _ := strings.Cut(c.rest, ",")
	return entry
}

func (c *ownedCursor) advance() {
	_, rest, found := strings.Cut(c.rest, ",")
	c.rest, c.done = rest, !found
}

// parseOwned reads one entry, key:Effect.
func parseOwned(entry string) (kuberules.TaintID, bool) {
	i := strings.LastIndexByte(entry, ':')
	if i < 0 {
		return kuberules.TaintID{Key: entry}, false
	}
	id := kuberules.TaintID{Key: entry[:i], Effect: corev1.TaintEffect(entry[i+1:])}
	return id, kuberules.TaintKeyProblem(id.Key) == "" && kuberules.IsValidEffect(id.Effect)
}

// ownedSet reads an ownership annotation into a set (nil when it lists
// none), and returns the entries it could not read.
func ownedSet(annotation string) (set map[kuberules.TaintID]bool, invalid []string) {
	for c := newOwnedCursor(annotation); ; c.advance() {
		id, ok, more := c.peek()
		if !more {
			return set, invalid
		}
		if ok {
			if set == nil {
				set = map[kuberules.TaintID]bool{}
			}
			set[id] = true
		} else {
			invalid = append(invalid, c.entry())
		}
	}
}

// formatOwned returns the annotation value for the taints that mine marks
// as the plugin's, in their order.
func formatOwned(taints []corev1.Taint, mine []bool) string {
	var b strings.Builder
	size := 0
	for i := range taints {
		if mine[i] {
			size += len(taints[i].Key) + len(taints[i].Effect) + 2
		}
	}
	b.Grow(size)
	for i := range taints {
		if !mine[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kuberules.IDOf(&taints[i]).String())
	}
	return b.String()
}

// taintText writes a taint as kubectl does: key=value:Effect, or key:Effect
// when the value is empty.
func taintText(t *corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}
