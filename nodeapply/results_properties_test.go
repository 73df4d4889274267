package nodeapply

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/pingstatus"
)

// The properties of Apply's results that its output alone shows: the
// changes are empty exactly when both patches are nil, the node is the
// input exactly when there are no changes, and the Result's
// NeedsObjectPatch and NeedsStatusPatch say which patch is not nil. The
// draws here (options, nodes, pings) serve the other properties too.

var agreementT0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// sameSpelling compares quantities by value and spelling.
var sameSpelling = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 && a.Format == b.Format })

// agreementOptions draws options of every kind.
func agreementOptions(t *rapid.T) Options {
	opts := Options{
		Reply:                 pingstatus.Options{ProtectedKeys: rapid.SliceOfN(rapid.SampledFrom(gen.SharedKeys), 0, 1).Draw(t, "protected")},
		ReplaceAllTaints:      rapid.IntRange(0, 3).Draw(t, "compat") == 0,
		ConnectivityCondition: rapid.SampledFrom([]corev1.NodeConditionType{"", "example.com/Connectivity"}).Draw(t, "connectivity"),
		Grace:                 rapid.SampledFrom([]time.Duration{0, 10 * time.Second}).Draw(t, "grace"),
		NoGrace:               rapid.IntRange(0, 3).Draw(t, "no grace") == 0,
		VirtualNodeConditions: rapid.Bool().Draw(t, "pressure"),
		KeepPingResponse:      rapid.Bool().Draw(t, "ping-response annotation"),
		PartGrace:             rapid.SampledFrom([]time.Duration{0, 30 * time.Second}).Draw(t, "part grace"),
	}
	if rapid.Bool().Draw(t, "heartbeats") {
		opts.HeartbeatInterval = time.Minute
	}
	return opts
}

// agreementNode draws a node, with conditions, and sometimes one the API
// server would refuse.
func agreementNode(t *rapid.T, opts Options) *corev1.Node {
	node := gen.Node().Draw(t, "node")
	node.Status.Conditions = gen.Conditions(opts.connectivity(), agreementT0).Draw(t, "conditions")
	if rapid.IntRange(0, 2).Draw(t, "part gone") == 0 { // as a ping left it, or someone, without a time
		gone := corev1.Taint{Key: PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule}
		if rapid.Bool().Draw(t, "time added") {
			added := metav1.NewTime(agreementT0.Add(time.Duration(rapid.IntRange(-120, 60).Draw(t, "left")) * time.Second))
			gone.TimeAdded = &added
		}
		node.Spec.Taints = append(slices.Clone(node.Spec.Taints), gone)
	}
	if rapid.Bool().Draw(t, "ownership annotation") { // perhaps stale, empty or hand-edited
		entries := rapid.SliceOfN(rapid.SampledFrom([]string{
			"vendor.io/maintenance:NoSchedule", "example.com/drain:NoExecute", "", "not-an-entry", "a.io/x:Evict",
		}), 0, 3).Draw(t, "entries")
		for _, taint := range node.Spec.Taints {
			if rapid.Bool().Draw(t, "owns "+taint.Key) {
				entries = append(entries, taint.Key+":"+string(taint.Effect))
			}
		}
		node.Annotations = map[string]string{opts.ownership(): strings.Join(entries, ",")}
	}
	if rapid.IntRange(0, 4).Draw(t, "broken") == 0 {
		if node.Status.Capacity == nil {
			node.Status.Capacity = corev1.ResourceList{}
		}
		node.Status.Capacity[corev1.ResourcePods] = resource.MustParse("1500m")
	}
	return node
}

// agreementPing draws a ping: answered or not, with a time or not, a reply
// parsed from a body or built by hand from the node's own figures (so that
// it often asks for what the node has), sometimes with devices, and what
// the pods hold.
func agreementPing(t *rapid.T, node *corev1.Node) Ping {
	var ping Ping
	if rapid.IntRange(0, 3).Draw(t, "timed") > 0 {
		ping.At = agreementT0.Add(time.Duration(rapid.IntRange(0, 120).Draw(t, "seconds")) * time.Second)
	}
	if rapid.IntRange(0, 3).Draw(t, "failed") == 0 {
		ping.Failure = rapid.SampledFrom([]string{"HTTP 500", "timeout after 3s"}).Draw(t, "failure")
	}
	ping.Unlisted = rapid.IntRange(0, 3).Draw(t, "unlisted") == 0
	ping.Body = []byte(rapid.SampledFrom([]string{"ok", `{"status":"ok"}`}).Draw(t, "body"))
	switch rapid.IntRange(0, 2).Draw(t, "reply") {
	case 0:
		patch, _ := pingstatus.Parse(gen.ReplyBody().Draw(t, "reply body"), pingstatus.Options{})
		ping.Reply = &patch
	case 1:
		patch := &pingstatus.NodePatch{Kind: pingstatus.Structured, Resources: corev1.ResourceList{}}
		for _, name := range slices.Sorted(maps.Keys(node.Status.Capacity)) { // drawn in a fixed order
			if rapid.Bool().Draw(t, "report "+string(name)) {
				patch.Resources[name] = node.Status.Capacity[name].DeepCopy()
			}
		}
		if rapid.Bool().Draw(t, "taints") {
			patch.ReplaceTaints = true
			patch.Taints = gen.UniqueTaints(3).Draw(t, "plugin taints")
		}
		if rapid.Bool().Draw(t, "devices") { // which Apply passes over: they are the pool's
			patch.ReplaceDevices = true
			patch.Devices, patch.KeptDeviceGroups = gen.PatchDevices(t)
		}
		ping.Reply = patch
	}
	if rapid.IntRange(0, 3).Draw(t, "held") == 0 {
		ping.Held = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(rapid.SampledFrom([]string{"0", "2", "-1"}).Draw(t, "held cpu"))}
	}
	return ping
}

// TestPropertyChangesAgreeWithPatches: the changes are empty exactly when
// both patches are nil, and NeedsObjectPatch and NeedsStatusPatch report
// whether each is not nil; the node is the input exactly when there are
// no changes; a change of figures only needs no object patch, and a status
// patch of capacity and allocatable alone; none of the node's changes is of a device (the devices are
// devicepool's: its TestPropertyChangesAreOfDevices).
func TestPropertyChangesAgreeWithPatches(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := agreementOptions(t)
		node := agreementNode(t, opts)
		ping := agreementPing(t, node)
		for step := range 2 { // as drawn, then once more after the first ping
			res := Apply(node, ping, opts)
			taints, status := res.ObjectPatch(), res.StatusPatch()
			for _, c := range res.Changes {
				if c.Subject == pingstatus.SubjectDevice {
					t.Fatalf("step %d: a change of a device among the node's: %v", step, c)
				}
			}
			if (res.Node == node) != (len(res.Changes) == 0) {
				t.Fatalf("step %d: returns the input node %v, changes %v", step, res.Node == node, res.Changes)
			}
			if (len(res.Changes) == 0) != (taints == nil && status == nil) {
				t.Fatalf("step %d: changes %v, but object patch %s and status patch %s", step, res.Changes, taints, status)
			}
			if res.NeedsObjectPatch() != (taints != nil) {
				t.Fatalf("step %d: NeedsObjectPatch %v, object patch %s; changes %v", step, res.NeedsObjectPatch(), taints, res.Changes)
			}
			if res.NeedsStatusPatch() != (status != nil) {
				t.Fatalf("step %d: NeedsStatusPatch %v, status patch %s; changes %v", step, res.NeedsStatusPatch(), status, res.Changes)
			}
			if res.FiguresOnly() {
				checkFiguresOnly(t, step, taints, status)
			}
			node = res.Node
			next := agreementPing(t, node)
			if rapid.Bool().Draw(t, "same reply") {
				next.Reply = ping.Reply
			}
			ping = next
		}
	})
}

// checkFiguresOnly checks the patches of a Result whose changes are of
// figures only: no object patch, and a status patch that sets capacity and
// allocatable and nothing else, so that holding it back holds back no
// taint, label or condition.
func checkFiguresOnly(t *rapid.T, step int, object, status []byte) {
	if object != nil {
		t.Fatalf("step %d: figures only, and an object patch %s", step, object)
	}
	var patch map[string]map[string]json.RawMessage
	if err := json.Unmarshal(status, &patch); err != nil {
		t.Fatalf("step %d: status patch %s: %v", step, status, err)
	}
	for top, fields := range patch {
		for field := range fields {
			if top != "status" || field != "capacity" && field != "allocatable" {
				t.Fatalf("step %d: figures only, and the status patch sets %s.%s: %s", step, top, field, status)
			}
		}
	}
}

// TestPropertyAHandBuiltPatchIsJudgedOnce: for any patch built by hand,
// valid or not, Apply gives the Result it gives for the same patch judged
// once by pingstatus.Check, the one entry (rule node-valid): the same
// node (the input itself exactly when it is), the same changes and
// patches, and the same warnings with Check's among them, but for those
// about devices, which are the pool's. The patch is never modified.
func TestPropertyAHandBuiltPatchIsJudgedOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := agreementOptions(t)
		opts.Reply.LabelNamespaces = gen.LabelNamespaces
		node := agreementNode(t, opts)
		ping := agreementPing(t, node)
		ping.Reply = gen.HandBuiltPatch().Draw(t, "hand-built patch")
		before, _ := json.Marshal(ping.Reply)
		judged, checkWarnings := opts.Reply.Check(ping.Reply)
		byHand := ping
		ping.Reply = judged
		got, want := Apply(node, byHand, opts), Apply(node, ping, opts)
		if after, _ := json.Marshal(byHand.Reply); string(after) != string(before) {
			t.Fatalf("Apply or Check modified the patch: %s, was %s", after, before)
		}
		if (got.Node == node) != (want.Node == node) {
			t.Fatalf("the input node back: %v by hand, %v judged", got.Node == node, want.Node == node)
		}
		if diff := cmp.Diff(want.Node, got.Node, sameSpelling); diff != "" {
			t.Fatalf("the node (-judged +by hand):\n%s", diff)
		}
		if diff := cmp.Diff(want.Changes, got.Changes); diff != "" {
			t.Fatalf("the changes (-judged +by hand):\n%s", diff)
		}
		if string(want.ObjectPatch()) != string(got.ObjectPatch()) || string(want.StatusPatch()) != string(got.StatusPatch()) {
			t.Fatalf("the patches: by hand %s %s, judged %s %s", got.ObjectPatch(), got.StatusPatch(), want.ObjectPatch(), want.StatusPatch())
		}
		wantWarnings, gotWarnings := want.Warnings, got.Warnings
		if ping.Reached() && !ping.Unlisted {
			for _, w := range checkWarnings {
				if w.Subject != pingstatus.SubjectDevice {
					wantWarnings = append(wantWarnings, w)
				}
			}
		} else { // a reply Apply does not take, it does not judge: its being empty or not, as built, says whether it is ignored with a warning
			replyIgnored := func(w pingstatus.Warning) bool { return w.Path == "ping.reply" }
			wantWarnings, gotWarnings = slices.DeleteFunc(slices.Clone(wantWarnings), replyIgnored), slices.DeleteFunc(slices.Clone(gotWarnings), replyIgnored)
		}
		byPath := func(x, y pingstatus.Warning) int { return strings.Compare(x.Path+x.Message, y.Path+y.Message) }
		wantWarnings, gotWarnings = slices.SortedFunc(slices.Values(wantWarnings), byPath), slices.SortedFunc(slices.Values(gotWarnings), byPath)
		if diff := cmp.Diff(wantWarnings, gotWarnings, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the warnings (-judged, with Check's +by hand):\n%s", diff)
		}
	})
}
