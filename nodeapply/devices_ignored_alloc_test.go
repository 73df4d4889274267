package nodeapply_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestDevicesIgnoredCostNothing pins down that a provider that publishes
// no devices pays nothing for a plugin that sends them: Apply passes the
// reply's devices over, so a steady node with a reply of 24 devices is
// the input node back, with no change, no warning and no allocation.
func TestDevicesIgnoredCostNothing(t *testing.T) {
	patch, warnings := pingstatus.Parse(readReply(t, "devices-gpus.json"), pingstatus.Options{})
	if len(warnings) != 0 || !patch.ReplaceDevices || len(patch.Devices) == 0 {
		t.Fatalf("devices-gpus.json: warnings %v, devices %v", warnings, patch.Devices)
	}
	node := nodeapply.Apply(readNode(t, "node-with-plugin-taints.json"), nodeapply.Ping{Reply: &patch}, nodeapply.Options{}).Node
	var res nodeapply.Result
	allocs := testing.AllocsPerRun(100, func() {
		res = nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, nodeapply.Options{})
	})
	if allocs != 0 || res.Node != node || len(res.Changes) != 0 || len(res.Warnings) != 0 {
		t.Errorf("a steady node with a reply of devices: %v allocations, the input node back %v, changes %v, warnings %v; want none and the input",
			allocs, res.Node == node, res.Changes, res.Warnings)
	}
}

// TestDevicesIgnoredReplies: for every reply of the test data, on every
// node, Apply gives the same node, changes and warnings as for the same
// reply without its devices (TestPropertyDevicesIgnored draws them).
func TestDevicesIgnoredReplies(t *testing.T) {
	nodes, err := filepath.Glob("../testdata/nodes/*.json")
	if err != nil || len(nodes) == 0 {
		t.Fatalf("no nodes: %v", err)
	}
	devices := 0
	for _, in := range golden.Inputs(t, "../testdata/replies/*") {
		patch, _ := pingstatus.Parse(in.Data, pingstatus.Options{})
		if !patch.ReplaceDevices {
			continue
		}
		devices++
		bare := patch
		bare.ReplaceDevices, bare.Devices, bare.KeptDeviceGroups = false, nil, nil
		for _, path := range nodes {
			node := readNode(t, filepath.Base(path))
			with := nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, nodeapply.Options{})
			without := nodeapply.Apply(node, nodeapply.Ping{Reply: &bare}, nodeapply.Options{})
			if (with.Node == node) != (without.Node == node) {
				t.Errorf("%s on %s: the input node back with devices %v, without %v", in.Name, path, with.Node == node, without.Node == node)
			}
			if diff := nodeDiff(without.Node, with.Node); diff != "" {
				t.Errorf("%s on %s: the devices change the node (-without +with):\n%s", in.Name, path, diff)
			}
			if diff := cmp.Diff(without.Changes, with.Changes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s on %s: the devices change the changes (-without +with):\n%s", in.Name, path, diff)
			}
			if diff := cmp.Diff(without.Warnings, with.Warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s on %s: the devices change the warnings (-without +with):\n%s", in.Name, path, diff)
			}
		}
	}
	if devices == 0 {
		t.Fatal("no reply of the test data has devices")
	}
}
