package confirm_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// The small universe the inputs are drawn from, so that pods, nodes and
// jobs collide often.
var (
	propBase       = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	propNodes      = []string{"", "vk-0", "vk-1", "vk-2"}
	propUIDs       = []types.UID{"uid-0", "uid-1", "uid-2", "uid-3"}
	propNamespaces = []string{"ns-a", "ns-b"}
	propClaims     = []string{"claim-a", "claim-b"}
	propClaimUIDs  = []types.UID{"", "cuid-a", "cuid-b"}
	propPools      = []string{"pool-vk-0", "pool-vk-1"}
	propShares     = []string{"", "share-a", "share-b"}
	// propTexts is every text the inputs may hold but the driver and device.
	propTexts = slices.Concat(propNodes, propNamespaces, propClaims, propPools, propShares,
		[]string{"pod-0", "pod-1", "pod-2", "pod-3", "uid-0", "uid-1", "uid-2", "uid-3", "cuid-a", "cuid-b"})
)

// propInput is the input of one Step.
type propInput struct {
	Allocations []confirm.Allocation
	Jobs        []confirm.Job
	Bound       map[types.UID]string
	Now         time.Time
	Opts        confirm.Options
}

func (in propInput) step() confirm.Result {
	return confirm.Step(in.Allocations, in.Jobs, in.Bound, in.Now, in.Opts)
}

// deadline is the deadline Step goes by (rule confirm-deadline).
func (in propInput) deadline() time.Duration {
	if in.Opts.Deadline <= 0 {
		return confirm.DefaultDeadline
	}
	return in.Opts.Deadline
}

// states returns the states of the jobs of pod on node, in order.
func (in propInput) states(pod types.UID, node string) []confirm.State {
	var out []confirm.State
	for _, j := range in.Jobs {
		if j.Pod == pod && j.Node == node && j.State != confirm.JobGone { // a gone job is no job
			out = append(out, j.State)
		}
	}
	return out
}

// live reports whether pod has a job the backend may still run, or runs,
// on any node.
func (in propInput) live(pod types.UID) bool {
	return slices.ContainsFunc(in.Jobs, func(j confirm.Job) bool {
		return j.Pod == pod && (j.State == confirm.JobQueued || j.State == confirm.JobStarted)
	})
}

func propPodName(uid types.UID) string { return "pod-" + strings.TrimPrefix(string(uid), "uid-") }

// propAllocation returns a generator of allocations whose age at now,
// when they have a time, is often at or near deadline.
func propAllocation(now time.Time, deadline time.Duration) *rapid.Generator[confirm.Allocation] {
	return rapid.Custom(func(t *rapid.T) confirm.Allocation {
		a := confirm.Allocation{
			Claim: types.NamespacedName{
				Namespace: rapid.SampledFrom(propNamespaces).Draw(t, "namespace"),
				Name:      rapid.SampledFrom(propClaims).Draw(t, "claim"),
			},
			ClaimUID: rapid.SampledFrom(propClaimUIDs).Draw(t, "claimUID"),
			Driver:   "backend.pingnode.io",
			Pool:     rapid.SampledFrom(propPools).Draw(t, "pool"),
			Device:   "confirm",
			Share:    rapid.SampledFrom(propShares).Draw(t, "share"),
			Node:     rapid.SampledFrom(propNodes).Draw(t, "node"),
			Status:   rapid.SampledFrom([]confirm.Status{confirm.Pending, confirm.Pending, confirm.Confirmed, confirm.Refused}).Draw(t, "status"),
		}
		if rapid.Bool().Draw(t, "allocated") {
			age := rapid.SampledFrom([]time.Duration{
				-time.Minute, 0, deadline - time.Second, deadline - time.Millisecond, deadline, deadline + time.Second, time.Hour,
			}).Draw(t, "age")
			a.Allocated = now.Add(-age)
		}
		for _, uid := range rapid.SliceOfN(rapid.SampledFrom(propUIDs), 0, 2).Draw(t, "pods") {
			a.Pods = append(a.Pods, confirm.Pod{Name: propPodName(uid), UID: uid})
		}
		return a
	})
}

// propJob returns a generator of jobs, half of them on the node of one of
// allocations, for one of its pods.
func propJob(allocations []confirm.Allocation) *rapid.Generator[confirm.Job] {
	return rapid.Custom(func(t *rapid.T) confirm.Job {
		j := confirm.Job{
			Pod:       rapid.SampledFrom(propUIDs).Draw(t, "pod"),
			Namespace: rapid.SampledFrom(propNamespaces).Draw(t, "namespace"),
			Node:      rapid.SampledFrom(propNodes).Draw(t, "node"),
			State:     rapid.SampledFrom([]confirm.State{confirm.JobQueued, confirm.JobStarted, confirm.JobRefused, confirm.JobGone}).Draw(t, "state"),
		}
		if len(allocations) > 0 && rapid.Bool().Draw(t, "ofAllocation") {
			a := rapid.SampledFrom(allocations).Draw(t, "allocation")
			j.Node = a.Node
			if len(a.Pods) > 0 {
				j.Pod = rapid.SampledFrom(a.Pods).Draw(t, "allocationPod").UID
			}
		}
		j.Name = propPodName(j.Pod)
		j.Kept = rapid.Bool().Draw(t, "kept")
		return j
	})
}

var propInputs = rapid.Custom(func(t *rapid.T) propInput {
	in := propInput{
		Now: propBase.Add(rapid.SampledFrom([]time.Duration{-time.Second, 0, 500 * time.Millisecond, time.Second}).Draw(t, "now")),
		Opts: confirm.Options{Deadline: rapid.SampledFrom([]time.Duration{
			0, -time.Second, 30 * time.Second, 600 * time.Second,
		}).Draw(t, "deadline")},
		Bound: rapid.MapOfN(rapid.SampledFrom(propUIDs), rapid.SampledFrom(propNodes), 0, 3).Draw(t, "bound"),
	}
	in.Allocations = rapid.SliceOfN(propAllocation(in.Now, in.deadline()), 0, 5).Draw(t, "allocations")
	in.Jobs = rapid.SliceOfN(propJob(in.Allocations), 0, 8).Draw(t, "jobs")
	return in
})

// propCopy returns a deep copy of in.
func propCopy(in propInput) propInput {
	out := in
	out.Allocations = slices.Clone(in.Allocations)
	for i := range out.Allocations {
		out.Allocations[i].Pods = slices.Clone(in.Allocations[i].Pods)
	}
	out.Jobs = slices.Clone(in.Jobs)
	out.Bound = maps.Clone(in.Bound)
	return out
}

// propCheck checks law on random inputs of Step and its result.
func propCheck(t *testing.T, law func(t *rapid.T, in propInput, res confirm.Result)) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInputs.Draw(t, "in")
		law(t, in, in.step())
	})
}

// TestPropertyPure checks rule confirm-pure: Step leaves its inputs as
// they were and keeps no state between calls.
func TestPropertyPure(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInputs.Draw(t, "in")
		before := propCopy(in)
		first := in.step()
		if diff := cmp.Diff(before, in); diff != "" {
			t.Fatalf("Step modified its inputs (-before +after):\n%s", diff)
		}
		propInputs.Draw(t, "other").step()
		if diff := cmp.Diff(first, in.step()); diff != "" {
			t.Fatalf("Step gave another result for the same input (-first +second):\n%s", diff)
		}
	})
}

// TestPropertyOnce checks rule confirm-once: one decision for each pending
// allocation, in the order given, and none for the others.
func TestPropertyOnce(t *testing.T) {
	propCheck(t, func(t *rapid.T, in propInput, res confirm.Result) {
		var want, got []confirm.Allocation
		for _, a := range in.Allocations {
			if a.Status == confirm.Pending {
				want = append(want, a)
			}
		}
		for _, d := range res.Decisions {
			got = append(got, d.Allocation)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decided allocations (-want +got):\n%s", diff)
		}
	})
}

// TestPropertyRuns checks rule confirm-runs: a confirmation only when each
// pod of the allocation has a started job on its node; and an allocation
// whose pods' jobs on its node are all started is confirmed.
func TestPropertyRuns(t *testing.T) {
	propCheck(t, func(t *rapid.T, in propInput, res confirm.Result) {
		for _, d := range res.Decisions {
			a := d.Allocation
			allStarted := a.Node != "" && len(a.Pods) > 0
			for _, p := range a.Pods {
				states := in.states(p.UID, a.Node)
				if d.Verdict == confirm.Confirm && !slices.Contains(states, confirm.JobStarted) {
					t.Errorf("%v confirmed, but pod %s has no started job on its node (jobs: %v)", a, p.UID, in.Jobs)
				}
				if len(states) == 0 || slices.ContainsFunc(states, func(s confirm.State) bool { return s != confirm.JobStarted }) {
					allStarted = false
				}
			}
			if d.Verdict == confirm.Confirm && len(a.Pods) == 0 {
				t.Errorf("%v confirmed without pods", a)
			}
			if allStarted && d.Verdict != confirm.Confirm {
				t.Errorf("every pod of %v has only started jobs on its node, got %v (jobs: %v)", a, d, in.Jobs)
			}
		}
	})
}

// TestPropertyRefused checks rules confirm-refused and confirm-deadline:
// which reason a refusal has, and that an allocation that is neither
// confirmed nor refused by them waits.
func TestPropertyRefused(t *testing.T) {
	propCheck(t, func(t *rapid.T, in propInput, res confirm.Result) {
		for _, d := range res.Decisions {
			a := d.Allocation
			anyRefused, onlyRefused, allStarted := false, false, len(a.Pods) > 0
			for _, p := range a.Pods {
				states := in.states(p.UID, a.Node)
				anyRefused = anyRefused || slices.Contains(states, confirm.JobRefused)
				onlyRefused = onlyRefused || len(states) > 0 && !slices.ContainsFunc(states, func(s confirm.State) bool { return s != confirm.JobRefused })
				allStarted = allStarted && slices.Contains(states, confirm.JobStarted)
			}
			past := !a.Allocated.IsZero() && in.Now.Sub(a.Allocated) >= in.deadline()
			refused := func(reason string) bool { return d.Verdict == confirm.Refuse && d.Reason == reason }
			switch {
			case refused(confirm.ReasonNoNode) != (a.Node == ""):
				t.Errorf("%v: got %v, want a refusal %s iff the allocation names no node", a, d, confirm.ReasonNoNode)
			case refused(confirm.ReasonRefused) && !anyRefused:
				t.Errorf("%v: got %v, but no pod has a refused job on its node (jobs: %v)", a, d, in.Jobs)
			case refused(confirm.ReasonNotStarted) && !past:
				t.Errorf("%v: got %v at %v, before its deadline %v", a, d, in.Now, in.deadline())
			case a.Node != "" && onlyRefused && !refused(confirm.ReasonRefused):
				t.Errorf("%v: got %v, want a refusal %s: a pod's job on its node is refused (jobs: %v)", a, d, confirm.ReasonRefused, in.Jobs)
			case a.Node != "" && !anyRefused && !allStarted && past && !refused(confirm.ReasonNotStarted):
				t.Errorf("%v: got %v at %v, want a refusal %s past its deadline %v", a, d, in.Now, confirm.ReasonNotStarted, in.deadline())
			case a.Node != "" && !anyRefused && !allStarted && !past && d.Verdict != confirm.Wait:
				t.Errorf("%v: got %v at %v, want wait (jobs: %v, deadline %v)", a, d, in.Now, in.Jobs, in.deadline())
			}
		}
	})
}

// TestPropertyRemove checks rules confirm-remove, confirm-kept and
// confirm-gone: a job is removed unless its pod is bound to its node, or
// is a pod of an allocation on its node that is confirmed, or pending and
// not refused by this step; a job of a node not known, when its pod is
// bound or its allocation confirmed; a live job kept by the caller, until
// its pod is bound to another node or has such an allocation on one; a
// gone job never.
func TestPropertyRemove(t *testing.T) {
	propCheck(t, func(t *rapid.T, in propInput, res confirm.Result) {
		var kept []confirm.Allocation // confirmed, or pending and not refused now
		decisions := res.Decisions    // of the pending allocations, in order (rule confirm-once)
		for _, a := range in.Allocations {
			if a.Status == confirm.Pending && len(decisions) > 0 {
				if decisions[0].Verdict != confirm.Refuse {
					kept = append(kept, a)
				}
				decisions = decisions[1:]
			} else if a.Status == confirm.Confirmed {
				kept = append(kept, a)
			}
		}
		var want []confirm.Job
		for _, j := range in.Jobs {
			node, bound := in.Bound[j.Pod]
			boundHere := bound && (node == j.Node || j.Node == "")
			has := func(a confirm.Allocation) bool {
				return slices.ContainsFunc(a.Pods, func(p confirm.Pod) bool { return p.UID == j.Pod })
			}
			removed := j.State != confirm.JobGone && !boundHere && !slices.ContainsFunc(kept, func(a confirm.Allocation) bool {
				return (a.Node == j.Node || j.Node == "" && a.Status == confirm.Confirmed) && has(a)
			})
			if removed && j.Kept && j.Node != "" && (j.State == confirm.JobQueued || j.State == confirm.JobStarted) {
				// Rule confirm-kept: removed only once its pod goes elsewhere.
				removed = bound && node != j.Node || slices.ContainsFunc(kept, func(a confirm.Allocation) bool { return a.Node != j.Node && has(a) })
			}
			if removed {
				want = append(want, j)
			}
		}
		if diff := cmp.Diff(want, res.Remove, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("removed jobs (-want +got):\n%s", diff)
		}
	})
}

// TestPropertyStart checks rules confirm-start and confirm-gone: a job is
// started only for a pod of a waiting allocation, on its node, when the
// pod has no live job (queued or started) on any node, once; a pod of a
// waiting allocation with no live job is started, whatever refused or
// gone jobs it has; a pod is never started while a live job of it is
// removed.
func TestPropertyStart(t *testing.T) {
	propCheck(t, func(t *rapid.T, in propInput, res confirm.Result) {
		var want []confirm.Start // the starts that may be given
		for _, d := range res.Decisions {
			a := d.Allocation
			if d.Verdict != confirm.Wait {
				continue
			}
			for _, p := range a.Pods {
				s := confirm.Start{Namespace: a.Claim.Namespace, Name: p.Name, Pod: p.UID, Node: a.Node}
				want = append(want, s)
				if !in.live(p.UID) && !slices.ContainsFunc(res.Start, func(o confirm.Start) bool { return o.Pod == p.UID }) {
					t.Errorf("pod %s of waiting %v has no job, but is not started: %v", p.UID, a, res.Start)
				}
			}
		}
		for _, s := range res.Start {
			if !slices.Contains(want, s) {
				t.Errorf("start %v is not for a pod of a waiting allocation on its node: %v", s, res.Decisions)
			}
			if in.live(s.Pod) {
				t.Errorf("start %v, but the pod has a live job: %v", s, in.Jobs)
			}
			if slices.ContainsFunc(res.Start[:slices.Index(res.Start, s)], func(o confirm.Start) bool { return o.Pod == s.Pod }) {
				t.Errorf("start %v twice: %v", s, res.Start)
			}
			if slices.ContainsFunc(res.Remove, func(j confirm.Job) bool { return j.Pod == s.Pod && j.State != confirm.JobRefused }) {
				t.Errorf("start %v while a live job of the pod is removed: %v", s, res.Remove)
			}
		}
	})
}

// TestPropertyWords checks rule confirm-words: fixed reasons and short
// messages with no text from the inputs, the same for the same reason;
// none for a wait.
func TestPropertyWords(t *testing.T) {
	reasons := map[confirm.Verdict][]string{
		confirm.Confirm: {confirm.ReasonRuns},
		confirm.Refuse:  {confirm.ReasonRefused, confirm.ReasonNotStarted, confirm.ReasonNoNode},
	}
	rapid.Check(t, func(t *rapid.T) {
		in := propInputs.Draw(t, "in")
		other := propInputs.Draw(t, "other")
		other.Opts = in.Opts
		messages := map[string]string{} // by reason
		for _, d := range slices.Concat(in.step().Decisions, other.step().Decisions) {
			if d.Verdict == confirm.Wait {
				if d.Reason != "" || d.Message != "" {
					t.Errorf("wait with words: %v", d)
				}
				continue
			}
			if !slices.Contains(reasons[d.Verdict], d.Reason) {
				t.Errorf("%v: reason %q, want one of %q", d, d.Reason, reasons[d.Verdict])
			}
			if d.Message == "" || len(d.Message) > 200 {
				t.Errorf("%v: message of %d bytes, want 1 to 200", d, len(d.Message))
			}
			for _, s := range propTexts {
				if s != "" && strings.Contains(d.Message, s) {
					t.Errorf("%v: message %q has %q from the inputs", d, d.Message, s)
				}
			}
			if m, ok := messages[d.Reason]; ok && m != d.Message {
				t.Errorf("reason %s with two messages: %q and %q", d.Reason, m, d.Message)
			}
			messages[d.Reason] = d.Message
		}
	})
}

// TestPropertyPatch checks Decision.Patch: a claim's status.devices entry
// for the share with the decision's one condition; nil for a wait.
func TestPropertyPatch(t *testing.T) {
	propCheck(t, func(t *rapid.T, in propInput, res confirm.Result) {
		for _, d := range res.Decisions {
			patch := d.Patch(in.Now)
			if d.Verdict == confirm.Wait {
				if patch != nil {
					t.Errorf("%v: patch %s, want nil", d, patch)
				}
				continue
			}
			var got resourcev1.ResourceClaim
			dec := json.NewDecoder(bytes.NewReader(patch))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("%v: patch %s does not decode into a ResourceClaim: %v", d, patch, err)
			}
			a := d.Allocation
			entry := resourcev1.AllocatedDeviceStatus{
				Driver: a.Driver, Pool: a.Pool, Device: a.Device,
				Conditions: []metav1.Condition{{
					Type:   map[confirm.Verdict]string{confirm.Confirm: confirm.ConditionRuns, confirm.Refuse: confirm.ConditionRefused}[d.Verdict],
					Status: metav1.ConditionTrue, Reason: d.Reason, Message: d.Message,
					LastTransitionTime: metav1.NewTime(in.Now.Truncate(time.Second)),
				}},
			}
			if a.Share != "" {
				entry.ShareID = &a.Share
			}
			want := resourcev1.ResourceClaim{
				TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
				ObjectMeta: metav1.ObjectMeta{Namespace: a.Claim.Namespace, Name: a.Claim.Name, UID: a.ClaimUID},
				Status:     resourcev1.ResourceClaimStatus{Devices: []resourcev1.AllocatedDeviceStatus{entry}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%v: patch (-want +got):\n%s", d, diff)
			}
		}
	})
}

// TestPropertyStateOf checks rule confirm-state: started when a container
// runs, terminated after it started, or terminated with an exit code of
// its own; else refused when one terminated with ExitCancelled; else gone
// when there are containers and each has an empty state; else queued;
// whatever the order of the containers.
func TestPropertyStateOf(t *testing.T) {
	started := metav1.NewTime(propBase)
	states := []corev1.ContainerState{
		{},
		{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		{Running: &corev1.ContainerStateRunning{}},
		{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}},
		{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}},
		{Terminated: &corev1.ContainerStateTerminated{ExitCode: confirm.ExitCancelled}},
		{Terminated: &corev1.ContainerStateTerminated{StartedAt: started}},
		{Terminated: &corev1.ContainerStateTerminated{StartedAt: started, ExitCode: confirm.ExitCancelled}},
	}
	rapid.Check(t, func(t *rapid.T) {
		var containers []corev1.ContainerStatus
		for _, s := range rapid.SliceOfN(rapid.SampledFrom(states), 0, 3).Draw(t, "states") {
			containers = append(containers, corev1.ContainerStatus{Name: "c", State: s})
		}
		want := confirm.JobQueued
		empty := len(containers) > 0
		for _, c := range containers {
			switch {
			case c.State.Running != nil || c.State.Terminated != nil && (!c.State.Terminated.StartedAt.IsZero() || c.State.Terminated.ExitCode != confirm.ExitCancelled):
				want = confirm.JobStarted
			case c.State.Terminated != nil && want == confirm.JobQueued:
				want = confirm.JobRefused
			}
			empty = empty && c.State.Waiting == nil && c.State.Running == nil && c.State.Terminated == nil
		}
		if empty {
			want = confirm.JobGone
		}
		for range 2 { // in the order given, and reversed
			if got := confirm.StateOf(containers); got != want {
				t.Fatalf("StateOf(%+v) = %v, want %v", containers, got, want)
			}
			slices.Reverse(containers)
		}
	})
}
