package nodeapply_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestDevicesSequence is one plugin's devices over a run of replies, each
// applied to the pool the one before left, with the devices that claims
// hold at each step: 8 A100s and 16 T4s on an empty pool; one A100 fewer
// free while claims hold two (available: the two held and 7 free are
// published); the same said as a total (8 in all: the two held and 6
// free); null (no news); a reply with mistakes (the refused groups keep
// their devices, a group no longer listed goes); [] (no devices).
func TestDevicesSequence(t *testing.T) {
	steps := []struct {
		reply string
		held  []string
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
	var pool []nodeapply.Device
	node := readNode(t, "interlink-node.json")
	for i, step := range steps {
		for j := range pool {
			pool[j].Held = slices.Contains(step.held, pool[j].Name)
		}
		patch, parseWarnings := pingstatus.Parse(readReply(t, step.reply), pingstatus.Options{})
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: &patch, Devices: pool}, nodeapply.Options{PublishDevices: true})
		fmt.Fprintf(&b, "== step %d: reply %s, claims hold %v\n", i+1, step.reply, step.held)
		section(&b, "parse warnings", parseWarnings)
		section(&b, "device changes", res.DeviceChanges)
		section(&b, "apply warnings", res.Warnings)
		fmt.Fprintf(&b, "needs devices: %v\npool after: %s\n\n", res.NeedsDevices(), poolText(res.Devices))

		if again := nodeapply.Apply(res.Node, nodeapply.Ping{Reply: &patch, Devices: res.Devices}, nodeapply.Options{PublishDevices: true}); len(again.Changes) != 0 || len(again.DeviceChanges) != 0 {
			t.Errorf("step %d: the same ping again changes %v %v", i+1, again.Changes, again.DeviceChanges)
		}
		node, pool = res.Node, slices.Clone(res.Devices)
	}
	golden.Check(t, filepath.Join("testdata", "devices-sequence.golden"), []byte(b.String()))
}

// poolText writes a pool compactly: each group's devices by index, a *
// after a held one, and what the group's devices are.
func poolText(pool []nodeapply.Device) string {
	if len(pool) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, d := range pool {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(d.Name)
		if d.Held {
			b.WriteString("*")
		}
	}
	return b.String()
}

// TestHandBuiltDevicePatch pins down that a patch built by hand, not by
// Parse, is read as Parse would give it: groups in any order, of a name
// given twice the last, and a group Parse would refuse refused with a
// warning, its devices left as they are.
func TestHandBuiltDevicePatch(t *testing.T) {
	s := func(v string) *string { return &v }
	pool := nodeapply.Apply(nil, nodeapply.Ping{Reply: &pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{
		{Name: "bad", Count: 1}, {Name: "t4", Count: 1},
	}}}, nodeapply.Options{PublishDevices: true}).Devices
	patch := &pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{
		{Name: "t4", Count: 5},
		{Name: "bad", Count: 3, Attributes: map[string]pingstatus.DeviceAttribute{"cudaComputeCapability": {VersionValue: s("8.0")}}},
		{Name: "a100", Count: 1},
		{Name: "t4", Count: 2},
		{Name: "Upper", Count: 1},
	}}
	res := nodeapply.Apply(nil, nodeapply.Ping{Reply: patch, Devices: pool}, nodeapply.Options{PublishDevices: true})
	if got, want := poolText(res.Devices), "a100-0 bad-0 t4-0 t4-1"; got != want {
		t.Errorf("pool %s, want %s", got, want)
	}
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.String())
	}
	want := []string{
		`patch.devices[Upper]: name must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit; its devices left as they are`,
		`patch.devices[bad]: attribute cudaComputeCapability: must be a semantic version 2.0.0, like 8.0.0 or 12.4.1-rc.1; its devices left as they are`,
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if again := nodeapply.Apply(nil, nodeapply.Ping{Reply: patch, Devices: res.Devices}, nodeapply.Options{PublishDevices: true}); again.NeedsDevices() {
		t.Errorf("the same patch again changed the pool: %v", again.DeviceChanges)
	}
}

// TestEqualDevices pins down what makes two pools the same to publish:
// names in order and descriptions by value, not whether a claim holds a
// device.
func TestEqualDevices(t *testing.T) {
	pool := nodeapply.Apply(nil, nodeapply.Ping{Reply: gpuGroups(2, 1)}, nodeapply.Options{PublishDevices: true}).Devices
	held := slices.Clone(pool)
	held[0].Held = true
	respelled := slices.Clone(pool)
	respelled[2].Capacity = map[string]resource.Quantity{"memory": resource.MustParse("16384Mi")}
	other := slices.Clone(pool)
	other[1].Capacity = map[string]resource.Quantity{"memory": resource.MustParse("40Gi")}
	for _, tc := range []struct {
		name string
		b    []nodeapply.Device
		want bool
	}{
		{"itself", pool, true},
		{"a device held", held, true},
		{"a capacity spelled otherwise", respelled, true},
		{"a capacity changed", other, false},
		{"one device fewer", pool[:2], false},
		{"in another order", []nodeapply.Device{pool[1], pool[0], pool[2]}, false},
	} {
		if got := nodeapply.EqualDevices(pool, tc.b); got != tc.want {
			t.Errorf("%s: EqualDevices = %v, want %v", tc.name, got, tc.want)
		}
	}
}
