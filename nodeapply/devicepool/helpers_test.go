package devicepool_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// apply is devicepool.Apply for a ping that reached the plugin, with the
// options a reply is parsed with by default.
func apply(pool []devicepool.Device, patch *pingstatus.NodePatch) devicepool.Result {
	return devicepool.Apply(pool, nodeapply.Ping{Reply: patch}, pingstatus.Options{})
}

// readReply reads a reply body of the module's test data.
func readReply(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../testdata/replies", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hold marks the devices of pool named in held as a claim's, and those
// named in running too as held for a pod the backend runs; the others
// are neither.
func hold(pool []devicepool.Device, held, running []string) {
	for j := range pool {
		pool[j].Held = slices.Contains(held, pool[j].Name) || slices.Contains(running, pool[j].Name)
		pool[j].Running = slices.Contains(running, pool[j].Name)
	}
}

// poolText writes a pool compactly: each group's devices by index, a *
// after one held for a pod the backend runs, a + after one held for a
// pod it does not run yet.
func poolText(pool []devicepool.Device) string {
	if len(pool) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, d := range pool {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(d.Name)
		switch {
		case d.Held && d.Running:
			b.WriteString("*")
		case d.Held:
			b.WriteString("+")
		}
	}
	return b.String()
}

// gpuGroups returns a reply's devices: a A100s and t T4s, described with
// NVIDIA's attribute names.
func gpuGroups(a, t int) *pingstatus.NodePatch {
	s := func(v string) *string { return &v }
	return &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{
		{Name: "a100", Count: a, Attributes: map[string]pingstatus.DeviceAttribute{
			"type": {StringValue: s("gpu")}, "productName": {StringValue: s("NVIDIA A100-SXM4-80GB")},
			"architecture": {StringValue: s("Ampere")}, "cudaComputeCapability": {VersionValue: s("8.0.0")},
			"driverVersion": {VersionValue: s("550.54.15")},
		}, Capacity: map[string]resource.Quantity{"memory": resource.MustParse("80Gi")}},
		{Name: "t4", Count: t, Attributes: map[string]pingstatus.DeviceAttribute{
			"type": {StringValue: s("gpu")}, "productName": {StringValue: s("Tesla T4")},
			"architecture": {StringValue: s("Turing")}, "cudaComputeCapability": {VersionValue: s("7.5.0")},
			"driverVersion": {VersionValue: s("550.54.15")},
		}, Capacity: map[string]resource.Quantity{"memory": resource.MustParse("16Gi")}},
	}}
}

// gpuGroup is a reply with one group of n devices, "gpu", on basis.
func gpuGroup(n int, basis pingstatus.Basis) *pingstatus.NodePatch {
	product := "NVIDIA A100-SXM4-80GB"
	return &pingstatus.NodePatch{Kind: pingstatus.Structured, Basis: basis, ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{{
		Name: "gpu", Count: n,
		Attributes: map[string]pingstatus.DeviceAttribute{"productName": {StringValue: &product}},
		Capacity:   map[string]resource.Quantity{"memory": resource.MustParse("80Gi")},
	}}}
}
