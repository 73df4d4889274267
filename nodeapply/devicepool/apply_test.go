package devicepool_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestDevicesSequence is one plugin's devices over a run of replies, each
// applied to the pool the one before left, with the devices that claims
// hold at each step, each for a pod the backend runs: 8 A100s and 16 T4s
// on an empty pool; one A100 fewer free while claims hold two (available:
// the two held and 7 free are published); the same said as a total (8 in
// all: the two held and 6 free); null (no news); a reply with mistakes
// (the refused groups keep their devices, a group no longer listed goes);
// [] (no devices). TestDevicesHeldSequence has pods the backend has not
// started.
func TestDevicesSequence(t *testing.T) {
	steps := []struct {
		reply string
		held  []string // all for pods the backend runs
	}{
		{"devices-gpus.json", nil},
		{"devices-gpus-one-fewer.json", []string{"a100-0", "a100-1"}},
		{"devices-gpus-total.json", []string{"a100-0", "a100-1"}},
		{"devices-null.json", []string{"a100-0", "a100-1"}},
		{"devices-gpus.json", []string{"a100-1", "t4-15"}},
		{"devices-mistakes.json", []string{"a100-1", "t4-15"}},
		{"devices-empty.json", []string{"t4-15"}},
	}
	var b strings.Builder
	var pool []devicepool.Device
	for i, step := range steps {
		hold(pool, step.held, step.held)
		patch, parseWarnings := pingstatus.Parse(readReply(t, step.reply), pingstatus.Options{})
		res := apply(pool, &patch)
		fmt.Fprintf(&b, "== step %d: reply %s, claims hold %v", i+1, step.reply, step.held)
		if len(step.held) > 0 {
			b.WriteString(", each for a pod the backend runs")
		}
		b.WriteString("\n")
		golden.Section(&b, "parse warnings", parseWarnings)
		golden.Section(&b, "device changes", res.Changes)
		golden.Section(&b, "apply warnings", res.Warnings)
		fmt.Fprintf(&b, "needs devices: %v\npool after: %s\n\n", len(res.Changes) > 0, poolText(res.Devices))

		if again := apply(res.Devices, &patch); len(again.Changes) != 0 {
			t.Errorf("step %d: the same ping again changes %v", i+1, again.Changes)
		}
		pool = slices.Clone(res.Devices)
	}
	golden.Check(t, filepath.Join("testdata", "devices-sequence.golden"), []byte(b.String()))
}

// TestEqual pins down what makes two pools the same to publish:
// names in order, descriptions by value and taints in order, not whether
// a claim holds a device or its pod runs.
func TestEqual(t *testing.T) {
	pool := apply(nil, gpuGroups(2, 1)).Devices
	held := slices.Clone(pool)
	held[0].Held = true
	respelled := slices.Clone(pool)
	respelled[2].Capacity = map[string]resource.Quantity{"memory": resource.MustParse("16384Mi")}
	other := slices.Clone(pool)
	other[1].Capacity = map[string]resource.Quantity{"memory": resource.MustParse("40Gi")}
	xid := pingstatus.DeviceTaint{Key: "gpu.nvidia.com/xid", Value: "79", Effect: pingstatus.DeviceTaintNoSchedule}
	lost := pingstatus.DeviceTaint{Key: "gpu.nvidia.com/gpu-lost", Effect: pingstatus.DeviceTaintNoSchedule}
	tainted, bothTaints, otherOrder, otherEffect, running := slices.Clone(pool), slices.Clone(pool), slices.Clone(pool), slices.Clone(pool), slices.Clone(pool)
	tainted[0].Taints = []pingstatus.DeviceTaint{xid}
	bothTaints[0].Taints, otherOrder[0].Taints = []pingstatus.DeviceTaint{xid, lost}, []pingstatus.DeviceTaint{lost, xid}
	otherEffect[0].Taints = []pingstatus.DeviceTaint{{Key: xid.Key, Value: xid.Value, Effect: pingstatus.DeviceTaintNoExecute}}
	running[0].Held, running[0].Running = true, true
	for _, tc := range []struct {
		name string
		a, b []devicepool.Device // a is pool when nil
		want bool
	}{
		{"itself", nil, pool, true},
		{"a device held", nil, held, true},
		{"a device held for a pod the backend runs", nil, running, true},
		{"a capacity spelled otherwise", nil, respelled, true},
		{"a capacity changed", nil, other, false},
		{"one device fewer", nil, pool[:2], false},
		{"in another order", nil, []devicepool.Device{pool[1], pool[0], pool[2]}, false},
		{"a taint added", nil, tainted, false},
		{"the same taints", tainted, slices.Clone(tainted), true},
		{"taints in another order", bothTaints, otherOrder, false},
		{"a taint's effect changed", tainted, otherEffect, false},
	} {
		a := pool
		if tc.a != nil {
			a = tc.a
		}
		if got := devicepool.Equal(a, tc.b); got != tc.want {
			t.Errorf("%s: Equal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFirstOfANameCounts pins down rule pool-order's "of a name the pool gives
// twice the first counts": a pool that gives gpu-0 twice, first as no
// group describes it and then as its group does, has gpu-0 described
// anew (a change, and a pool after with gpu-0 once, as its group says);
// given the other way round, gpu-0 is as its group says, no change.
func TestFirstOfANameCounts(t *testing.T) {
	patch := gpuGroup(1, "")
	published := apply(nil, patch).Devices // gpu-0, as its group says
	stale := devicepool.Device{Name: "gpu-0"}

	res := apply([]devicepool.Device{stale, published[0]}, patch)
	if len(res.Changes) != 1 || len(res.Devices) != 1 || !devicepool.Equal(res.Devices, published) {
		t.Errorf("stale gpu-0 first: changes %v, pool after %d devices; want gpu-0 described anew, once", res.Changes, len(res.Devices))
	}
	res = apply([]devicepool.Device{published[0], stale}, patch)
	if len(res.Changes) != 0 {
		t.Errorf("gpu-0 as its group says first: changes %v; want none", res.Changes)
	}
}
