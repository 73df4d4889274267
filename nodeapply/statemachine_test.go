package nodeapply_test

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// cluster models a provider pinging its plugin while an administrator edits
// taints and the provider restarts. The node is the API server's copy: the
// provider writes back every changed node, and re-reads it on restart.
type cluster struct {
	node  *corev1.Node
	opts  nodeapply.Options
	admin map[kuberules.TaintID]string // taints an administrator set, and their values
	// wanted is the plugin's last taint list, and kept the keys it last
	// sent with a refused value.
	wanted, everWanted []corev1.Taint
	kept               []string
	// full is the value of the backend-full taint the last news of cpu
	// and memory asks for, "" for none (rule backend-full).
	full string
}

func (c *cluster) init(t *rapid.T) {
	c.opts = nodeapply.Options{Reply: pingstatus.Options{ProtectedKeys: []string{"site.example.com/static"}}}
	c.node = gen.Node().Draw(t, "node")
	c.node.Spec.Taints = append(c.node.Spec.Taints, corev1.Taint{Key: "site.example.com/static", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
	c.admin = map[kuberules.TaintID]string{}
	for _, taint := range c.node.Spec.Taints { // all foreign at the start
		c.admin[kuberules.IDOf(&taint)] = taint.Value
	}
}

// Ping: the plugin answers, the provider applies and writes back.
func (c *cluster) Ping(t *rapid.T) {
	var patch *pingstatus.NodePatch
	if rapid.IntRange(0, 2).Draw(t, "parsed") == 0 {
		p, _ := pingstatus.Parse(gen.ReplyBody().Draw(t, "body"), c.opts.Reply)
		patch = &p
	} else {
		patch = validPatch(t)
		patch.Taints = dropProtected(patch.Taints, c.opts.Reply.ProtectedKeys)
	}
	res := nodeapply.Apply(c.node, nodeapply.Ping{Reply: patch}, c.opts)
	if judged, _ := c.opts.Reply.Check(patch); hasNewsOfRoom(judged) {
		c.full = fullValue(judged.Full)
	}
	if again := nodeapply.Apply(res.Node, nodeapply.Ping{Reply: patch}, c.opts); len(again.Changes) != 0 {
		t.Fatalf("a repeated ping changes %v", again.Changes)
	}
	c.node = res.Node
	if patch.ReplaceTaints {
		c.wanted, c.kept = patch.Taints, patch.KeptTaintKeys
		c.everWanted = append(c.everWanted, patch.Taints...)
		// After a taints list, the annotation names exactly the taints it
		// owns on the node: no stale entry from a taint an admin removed.
		entries := splitOwned(c.node.Annotations[nodeapply.DefaultOwnershipAnnotation])
		if len(entries) != len(ownedIDs(c.node)) {
			t.Fatalf("the ownership annotation %q names taints that are not on the node %v", entries, c.node.Spec.Taints)
		}
	}
}

func dropProtected(taints []corev1.Taint, protected []string) []corev1.Taint {
	var out []corev1.Taint
	for _, taint := range taints {
		if !kuberules.IsProtectedKey(taint.Key, protected) {
			out = append(out, taint)
		}
	}
	return out
}

// AdminAddsTaint: kubectl taint, which refuses a key and effect the node has.
func (c *cluster) AdminAddsTaint(t *rapid.T) {
	taint := gen.Taint().Draw(t, "admin taint")
	for _, existing := range c.node.Spec.Taints {
		if kuberules.IDOf(&existing) == kuberules.IDOf(&taint) {
			t.Skip("the node has this taint already")
		}
	}
	if slices.Contains(splitOwned(c.node.Annotations[nodeapply.DefaultOwnershipAnnotation]), kuberules.IDOf(&taint).String()) {
		// The administrator removed the plugin's taint and sets it again
		// before the next ping: by the documented rule it stays the
		// plugin's, since nothing on the node tells the two apart.
		t.Skip("the ownership annotation still lists this key and effect")
	}
	c.node = c.node.DeepCopy()
	c.node.Spec.Taints = append(c.node.Spec.Taints, taint)
	c.admin[kuberules.IDOf(&taint)] = taint.Value
}

// AdminRemovesTaint: kubectl taint key:Effect- on any taint, the plugin's too.
func (c *cluster) AdminRemovesTaint(t *rapid.T) {
	if len(c.node.Spec.Taints) == 0 {
		t.Skip("no taints")
	}
	i := rapid.IntRange(0, len(c.node.Spec.Taints)-1).Draw(t, "which")
	c.node = c.node.DeepCopy()
	id := kuberules.IDOf(&c.node.Spec.Taints[i])
	c.node.Spec.Taints = append(c.node.Spec.Taints[:i], c.node.Spec.Taints[i+1:]...)
	delete(c.admin, id)
	if isBackendFull(corev1.Taint{Key: id.Key, Effect: id.Effect}) { // until the next news of cpu or memory
		c.full = ""
	}
}

// ProviderRestarts: the provider forgets everything and reads the node back.
func (c *cluster) ProviderRestarts(t *rapid.T) {
	c.node = roundTrip(t, c.node)
}

func (c *cluster) Check(t *rapid.T) {
	if p := kuberules.NodeProblems(c.node); p != nil {
		t.Fatalf("invalid node: %v", p)
	}
	// Every taint an administrator set is there, with its value, unless the
	// plugin set the same key and effect earlier and the administrator's
	// "add" was refused (it never is: AdminAddsTaint skips those).
	for id, value := range c.admin {
		if !hasTaint(c.node, corev1.Taint{Key: id.Key, Value: value, Effect: id.Effect}) {
			t.Fatalf("administrator's taint %s=%s is gone: %v", id, value, c.node.Spec.Taints)
		}
	}
	// The backend-full taint stands with the value the last news of cpu
	// and memory asks for, or is gone.
	var want []corev1.Taint
	if c.full != "" {
		want = []corev1.Taint{{Key: nodeapply.BackendFullTaintKey, Value: c.full, Effect: corev1.TaintEffectNoSchedule}}
	}
	if got := backendFulls(c.node); !reflect.DeepEqual(want, got) {
		t.Fatalf("backend-full taints %v, want %v", got, want)
	}
	// Every other taint is one the plugin asked for at some point.
	for _, taint := range c.node.Spec.Taints {
		if _, ok := c.admin[kuberules.IDOf(&taint)]; ok || isBackendFull(taint) {
			continue
		}
		if !containsTaint(c.everWanted, taint) {
			t.Fatalf("taint %v is neither the administrator's nor ever the plugin's", taint)
		}
	}
	// The ownership annotation names only taints on the node, none of them
	// an administrator's.
	for id := range ownedIDs(c.node) {
		if _, ok := c.admin[id]; ok {
			t.Fatalf("administrator's taint %s is recorded as the plugin's", id)
		}
	}
}

func containsTaint(list []corev1.Taint, taint corev1.Taint) bool {
	for _, w := range list {
		if w.Key == taint.Key && w.Value == taint.Value && w.Effect == taint.Effect {
			return true
		}
	}
	return false
}

func TestPropertyStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c cluster
		c.init(t)
		t.Repeat(rapid.StateMachineActions(&c))
	})
}
