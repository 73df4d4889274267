package parts_test

import (
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// t0 is the time of the first ping of the tests.
var t0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// at returns t0 plus seconds.
func at(seconds float64) time.Time {
	return t0.Add(time.Duration(seconds * float64(time.Second)))
}

// goneTaint returns the part-gone taint as Apply puts it, added at
// since, or with no time added for a zero since.
func goneTaint(since time.Time) corev1.Taint {
	t := corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule}
	if !since.IsZero() {
		added := metav1.NewTime(since)
		t.TimeAdded = &added
	}
	return t
}

// served returns the node vk-<part> of part, with pods and taints.
func served(part string, pods int, taints ...corev1.Taint) parts.Node {
	return parts.Node{
		Part: part,
		Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vk-" + part}, Spec: corev1.NodeSpec{Taints: taints}},
		Pods: pods,
	}
}

// part returns a part of a reply with cpu as its one resource.
func part(name, cpu string) pingstatus.Part {
	return pingstatus.Part{Name: name, Patch: pingstatus.NodePatch{
		Kind:      pingstatus.Structured,
		Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
	}}
}

// listing returns a reply that lists ps, judged as Parse gives it: the
// parts in name order, each name once.
func listing(ps ...pingstatus.Part) *pingstatus.NodePatch {
	return judge(rawListing(ps...))
}

// judge returns r judged, as Parse gives a reply: a reply is changed
// before it is judged, never after (a change after is judged afresh).
func judge(r *pingstatus.NodePatch) *pingstatus.NodePatch {
	judged, _ := pingstatus.Options{}.Check(r)
	return judged
}

// rawListing returns a reply that lists ps as they are, built by hand and
// not judged.
func rawListing(ps ...pingstatus.Part) *pingstatus.NodePatch {
	return &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceParts: true, Parts: ps}
}

// sameDecisions compares decisions by what they say: the part, the
// action, the node itself, and the patch's content.
var sameDecisions = cmp.Options{
	cmp.Comparer(func(a, b *corev1.Node) bool { return a == b }),
	cmpopts.IgnoreUnexported(pingstatus.NodePatch{}),
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
}

// incomplete returns a reply that lists ps and had an entry refused
// before its name could be read.
func incomplete(ps ...pingstatus.Part) *pingstatus.NodePatch {
	r := rawListing(ps...)
	r.PartsIncomplete = true
	return judge(r)
}

// decisionLines returns the decisions as their log lines.
func decisionLines(ds []parts.Decision) []string {
	var lines []string
	for _, d := range ds {
		lines = append(lines, d.String())
	}
	return lines
}
