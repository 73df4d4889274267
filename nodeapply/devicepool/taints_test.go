package devicepool_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestDeviceTaintsSequence pins down that every device of a group carries
// the group's taints, the held ones too, and that a change of them (a
// value, one more, their order, none) is a change of each device: a group
// of 2 tainted for an XID; the same again; another XID and an
// unmonitored taint, a claim holding gpu-0 for a running pod; the two in
// the other order; no taints. Typed patches, each applied to the pool the
// one before left.
func TestDeviceTaintsSequence(t *testing.T) {
	xid := func(v string) pingstatus.DeviceTaint {
		return pingstatus.DeviceTaint{Key: "gpu.nvidia.com/xid", Value: v, Effect: pingstatus.DeviceTaintNoSchedule}
	}
	unmonitored := pingstatus.DeviceTaint{Key: "gpu.nvidia.com/unmonitored", Effect: pingstatus.DeviceTaintNone}
	steps := []struct {
		note    string
		count   int
		taints  []pingstatus.DeviceTaint
		running []string
	}{
		{"an XID on the group", 2, []pingstatus.DeviceTaint{xid("79")}, nil},
		{"the same again", 2, []pingstatus.DeviceTaint{xid("79")}, nil},
		{"another XID, and unmonitored; gpu-0 held for a running pod", 1, []pingstatus.DeviceTaint{xid("48"), unmonitored}, []string{"gpu-0"}},
		{"the same two in the other order", 1, []pingstatus.DeviceTaint{unmonitored, xid("48")}, []string{"gpu-0"}},
		{"healthy: no taints", 1, nil, []string{"gpu-0"}},
	}
	var b strings.Builder
	var pool []devicepool.Device
	for i, step := range steps {
		hold(pool, nil, step.running)
		patch := gpuGroup(step.count, "")
		patch.Devices[0].Taints = step.taints
		res := apply(pool, patch)
		var taints []string
		for _, t := range step.taints {
			taints = append(taints, strings.TrimSuffix(t.Key+"="+t.Value, "=")+":"+string(t.Effect))
		}
		fmt.Fprintf(&b, "== step %d: %s\ncount %d; taints %v; held, pod runs: %v\n", i+1, step.note, step.count, taints, step.running)
		golden.Section(&b, "device changes", res.Changes)
		golden.Section(&b, "apply warnings", res.Warnings)
		fmt.Fprintf(&b, "needs devices: %v\npool after: %s\n", len(res.Changes) > 0, poolText(res.Devices))
		for _, d := range res.Devices {
			fmt.Fprintf(&b, "  %s: %s\n", d.Name, d.Description())
			if !slices.Equal(d.Taints, step.taints) {
				t.Errorf("step %d: %s has taints %v, its group %v", i+1, d.Name, d.Taints, step.taints)
			}
		}
		b.WriteString("\n")
		if again := apply(res.Devices, patch); len(again.Changes) > 0 {
			t.Errorf("step %d: the same ping again changes %v", i+1, again.Changes)
		}
		pool = slices.Clone(res.Devices)
	}
	golden.Check(t, filepath.Join("testdata", "devices-taints.golden"), []byte(b.String()))
}
