package dra_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
	"github.com/pingnode/pingnode/pingstatus"
)

// pod is a pod bound to the node, in phase, started at start (none when
// zero).
func pod(uid types.UID, phase corev1.PodPhase, start time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: string(uid), Namespace: "default", UID: uid}}
	p.Status.Phase = phase
	if !start.IsZero() {
		p.Status.StartTime = &metav1.Time{Time: start}
	}
	return p
}

// TestPoolRunning pins down when Pool marks a held device Running: when
// its claim is reserved for a pod of the node's pods that runs on the
// backend as of the ping (Running, started before it), by UID.
func TestPoolRunning(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	published := []*resourcev1.ResourceSlice{slice(1, dra.Devices(devicepool.Apply(nil, nodeapply.Ping{Reply: gpus(2, 0)}, pingstatus.Options{}).Devices))}
	other := func(c *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
		c.Status.ReservedFor[0].Resource = "replicasets" // the same UID, another kind
		return c
	}
	for _, tc := range []struct {
		name    string
		pods    []*corev1.Pod
		claim   *resourcev1.ResourceClaim
		running bool
	}{
		{"a pending pod", []*corev1.Pod{pod("u1", corev1.PodPending, time.Time{})}, allocated("c", "u1", "a100-0"), false},
		{"a running pod started before the ping", []*corev1.Pod{pod("u1", corev1.PodRunning, at.Add(-time.Minute))}, allocated("c", "u1", "a100-0"), true},
		{"a running pod started after the ping", []*corev1.Pod{pod("u1", corev1.PodRunning, at.Add(time.Second))}, allocated("c", "u1", "a100-0"), false},
		{"a running pod not started yet as seen", []*corev1.Pod{pod("u1", corev1.PodRunning, time.Time{})}, allocated("c", "u1", "a100-0"), false},
		{"a pod that ended", []*corev1.Pod{pod("u1", corev1.PodSucceeded, at.Add(-time.Hour))}, allocated("c", "u1", "a100-0"), false},
		{"the claim reserved for another pod", []*corev1.Pod{pod("u2", corev1.PodRunning, at.Add(-time.Minute))}, allocated("c", "u1", "a100-0"), false},
		{"the claim reserved for no pod", []*corev1.Pod{pod("u1", corev1.PodRunning, at.Add(-time.Minute))}, allocated("c", "", "a100-0"), false},
		{"reserved for something else with the pod's UID", []*corev1.Pod{pod("u1", corev1.PodRunning, at.Add(-time.Minute))}, other(allocated("c", "u1", "a100-0")), false},
		{"the pod not among the node's pods", nil, allocated("c", "u1", "a100-0"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := dra.Pool(published, []*resourcev1.ResourceClaim{tc.claim}, append(tc.pods, nil), at, driver, poolName)
			if len(read) != 2 || read[0].Name != "a100-0" {
				t.Fatalf("pool %v", read)
			}
			if !read[0].Held || read[0].Running != tc.running {
				t.Errorf("a100-0: held %v, running %v; want held, running %v", read[0].Held, read[0].Running, tc.running)
			}
			if read[1].Held || read[1].Running {
				t.Errorf("a100-1, no claim's: held %v, running %v", read[1].Held, read[1].Running)
			}
		})
	}
}

// TestTaintsReadBack: a tainted group's devices, published and read back
// from the slice as written and as the API server stores it (each
// taint's TimeAdded set), are the pool Apply left, taints and all; the
// same reply on it changes nothing and allocates nothing.
func TestTaintsReadBack(t *testing.T) {
	reply := gpus(2, 1)
	reply.Devices[0].Taints = []pingstatus.DeviceTaint{
		{Key: "gpu.nvidia.com/xid", Value: "79", Effect: pingstatus.DeviceTaintNoSchedule},
		{Key: "gpu.nvidia.com/unmonitored", Effect: pingstatus.DeviceTaintNone},
	}
	reply, _ = pingstatus.Options{}.Check(reply) // judged once, as Parse gives a reply
	pool := devicepool.Apply(nil, nodeapply.Ping{Reply: reply}, pingstatus.Options{}).Devices
	written := dra.Devices(pool)
	want := resourcev1.DeviceTaint{Key: "gpu.nvidia.com/xid", Value: "79", Effect: resourcev1.DeviceTaintEffectNoSchedule}
	if len(written[0].Taints) != 2 || written[0].Taints[0] != want || written[0].Taints[1].TimeAdded != nil || len(written[2].Taints) != 0 {
		t.Fatalf("devices written: %+v", written)
	}
	stored := slice(1, dra.Devices(pool))
	added := metav1.NewTime(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	for i := range stored.Spec.Devices {
		for k := range stored.Spec.Devices[i].Taints {
			stored.Spec.Devices[i].Taints[k].TimeAdded = &added
		}
	}
	for name, s := range map[string]*resourcev1.ResourceSlice{"as written": slice(1, written), "as stored": stored} {
		read := dra.Pool([]*resourcev1.ResourceSlice{s}, nil, nil, time.Time{}, driver, poolName)
		if diff := cmp.Diff(pool, read, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("%s: pool read back (-want +got):\n%s", name, diff)
		}
		if !devicepool.Equal(pool, read) {
			t.Errorf("%s: the pool read back is not the pool published", name)
		}
		var res devicepool.Result
		allocs := testing.AllocsPerRun(20, func() {
			res = devicepool.Apply(read, nodeapply.Ping{Reply: reply}, pingstatus.Options{})
		})
		if len(res.Changes) > 0 || allocs != 0 {
			t.Errorf("%s: the same reply again: changes %v, %v allocations; want none", name, res.Changes, allocs)
		}
	}
	// What Devices returns shares no taints with the pool.
	written[0].Taints[0].Value = "changed"
	if pool[0].Taints[0].Value != "79" || pool[1].Taints[0].Value != "79" {
		t.Error("a change of a written taint reached the pool")
	}
}
