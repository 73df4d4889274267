package pingstatus_test

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/pingstatus"
)

// A provider parses the plugin's reply. The good fields are taken; each
// refused one gets a warning with its JSON path.
func ExampleParse() {
	body := []byte(`{
	  "status": "ok",
	  "resources": {"cpu": "64", "memory": "-1Gi", "accelerators": [{"resourceType": "nvidia.com/gpu", "available": "4"}]},
	  "taints": [{"key": "vendor.io/maintenance", "value": "true", "effect": "Drain"}]
	}`)
	patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
	fmt.Println("kind:", patch.Kind)
	for _, name := range []string{"cpu", "memory", "nvidia.com/gpu"} {
		if q, ok := patch.Resources[corev1.ResourceName(name)]; ok {
			fmt.Printf("%s: %s\n", name, q.String())
		}
	}
	for _, t := range patch.Taints {
		fmt.Printf("taint: %s=%s:%s\n", t.Key, t.Value, t.Effect)
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	// Output:
	// kind: structured
	// cpu: 64
	// nvidia.com/gpu: 4
	// taint: vendor.io/maintenance=true:NoSchedule
	// warning: resources.memory: -1Gi must not be negative; memory left unchanged
	// warning: taints[0].effect: "Drain" is not NoSchedule, PreferNoSchedule or NoExecute; NoSchedule used
}

// Old plugins answer the ping with plain text, null or a JSON array. Their
// replies are legacy: no change, no warning.
func ExampleParse_legacy() {
	for _, body := range []string{"ok", "null", "[]", ""} {
		patch, warnings := pingstatus.Parse([]byte(body), pingstatus.Options{})
		fmt.Printf("%q: %v, empty %v, %d warnings\n", body, patch.Kind, patch.IsEmpty(), len(warnings))
	}
	// Output:
	// "ok": legacy, empty true, 0 warnings
	// "null": legacy, empty true, 0 warnings
	// "[]": legacy, empty true, 0 warnings
	// "": legacy, empty true, 0 warnings
}

// A plugin builds its reply with the wire types and checks it before
// serving it.
func ExamplePingResponse_Validate() {
	reply := pingstatus.PingResponse{Status: "ok"}
	reply.Resources = &pingstatus.ResourcesResponse{
		CPU:    "128",
		Memory: "512Gi",
		Accelerators: []pingstatus.AcceleratorResponse{
			{ResourceType: "nvidia.com/gpu", Available: "8"},
			{ResourceType: "gpu", Available: "1"}, // not domain-prefixed
		},
	}
	reply.Taints = []pingstatus.TaintResponse{} // the plugin wants none of its taints any more
	for _, w := range reply.Validate(pingstatus.Options{}) {
		fmt.Println(w)
	}
	body, _ := json.Marshal(reply)
	fmt.Println(string(body))
	// Output:
	// resources.accelerators[1].resourceType: "gpu" is not an extended resource name: must be domain-prefixed, like example.com/gpu; entry dropped
	// {"status":"ok","resources":{"cpu":"128","memory":"512Gi","accelerators":[{"resourceType":"nvidia.com/gpu","available":"8"},{"resourceType":"gpu","available":"1"}]},"taints":[]}
}

// A plugin describes its devices as groups of identical ones, and checks
// the reply before serving it.
func ExamplePingResponse_Validate_devices() {
	product, capability, bad := "NVIDIA A100-SXM4-80GB", "8.0.0", "7.5"
	reply := pingstatus.PingResponse{Status: "ok"}
	reply.Devices = []pingstatus.DeviceResponse{
		{
			Name:  "a100",
			Count: 8,
			Attributes: map[string]pingstatus.DeviceAttribute{
				"productName":           {StringValue: &product},
				"cudaComputeCapability": {VersionValue: &capability},
			},
			Capacity: map[string]pingstatus.DeviceCapacity{"memory": {Value: "80Gi"}},
		},
		{
			Name:       "t4",
			Count:      16,
			Attributes: map[string]pingstatus.DeviceAttribute{"cudaComputeCapability": {VersionValue: &bad}},
		},
	}
	for _, w := range reply.Validate(pingstatus.Options{}) {
		fmt.Println(w)
	}
	patch, _ := pingstatus.Parse(mustMarshal(reply), pingstatus.Options{})
	for _, g := range patch.Devices {
		fmt.Printf("group %s: %d devices\n", g.Name, g.Count)
	}
	fmt.Println("kept:", patch.KeptDeviceGroups)
	// Output:
	// devices[1].attributes[cudaComputeCapability].version: "7.5" is not a valid version: must be a semantic version 2.0.0, like 8.0.0 or 12.4.1-rc.1; entry dropped, the plugin's current t4 devices kept
	// group a100: 8 devices
	// kept: [t4]
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A provider that builds a patch by hand, rather than parsing a reply,
// has it judged by the rules Parse judges a reply with: what Parse would
// refuse is refused, with a warning under the patch's field. The result
// remembers that it was judged, and is checked again at no cost.
func ExampleOptions_Check() {
	patch := &pingstatus.NodePatch{
		Resources:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), "gpu": resource.MustParse("8")},
		ReplaceTaints:  true,
		Taints:         []corev1.Taint{{Key: "vendor.io/maintenance", Effect: "Evict"}, {Key: "node.kubernetes.io/unschedulable", Effect: "NoSchedule"}},
		ReplaceDevices: true,
		Devices: []pingstatus.DeviceGroup{
			{Name: "t4", Count: 4},
			{Name: "a100", Count: 5000},
			{Name: "h100", Count: 8, Taints: []pingstatus.DeviceTaint{{Key: "gpu.nvidia.com/xid", Value: "79", Effect: "PreferNoSchedule"}}},
		},
	}
	checked, warnings := pingstatus.Options{}.Check(patch)
	fmt.Println("resources:", len(checked.Resources), "taints:", checked.Taints)
	for _, g := range checked.Devices {
		fmt.Printf("published: %s, %d devices\n", g.Name, g.Count)
	}
	fmt.Println("kept as they are:", checked.KeptDeviceGroups)
	for _, w := range warnings {
		fmt.Printf("warning (%s): %s\n", w.Rule, w)
	}
	again, warnings := pingstatus.Options{}.Check(checked)
	fmt.Println("checked again:", again == checked, len(warnings))
	// Output:
	// resources: 1 taints: [{vendor.io/maintenance  NoSchedule <nil>}]
	// published: t4, 4 devices
	// kept as they are: [a100 h100]
	// warning (accelerator-name): patch.resources[gpu]: "gpu" is not an extended resource name: must be domain-prefixed, like example.com/gpu; entry dropped
	// warning (taint-valid): patch.taints[0].effect: "Evict" is not NoSchedule, PreferNoSchedule or NoExecute; NoSchedule used
	// warning (taint-reserved): patch.taints[1].key: node.kubernetes.io/unschedulable belongs to Kubernetes controllers; entry dropped
	// warning (device-fields): patch.devices[a100].count: 5000 is too large: the most is 1024; entry dropped, the plugin's current a100 devices kept
	// warning (device-taints): patch.devices[h100].taints[0].effect: PreferNoSchedule is a node taint's effect, not a device's: None, NoSchedule or NoExecute; entry dropped, the plugin's current h100 devices kept
	// checked again: true 0
}

// A plugin that knows a GPU is failing says so on its group: the GPU that
// reported NVIDIA's XID 79 (fallen off the bus) takes no new claim. A
// node taint's effect is refused on a device.
func ExamplePingResponse_Validate_deviceTaints() {
	var reply pingstatus.PingResponse
	reply.Devices = []pingstatus.DeviceResponse{
		{Name: "a100-failing", Count: 1, Taints: []pingstatus.TaintResponse{
			{Key: "gpu.nvidia.com/xid", Value: "79", Effect: "NoSchedule"},
		}},
		{Name: "t4", Count: 2, Taints: []pingstatus.TaintResponse{
			{Key: "gpu.nvidia.com/unmonitored", Effect: "PreferNoSchedule"},
		}},
	}
	for _, w := range reply.Validate(pingstatus.Options{}) {
		fmt.Println(w)
	}
	patch, _ := pingstatus.Parse(mustMarshal(reply), pingstatus.Options{})
	for _, g := range patch.Devices {
		fmt.Printf("group %s: %v\n", g.Name, g.Taints)
	}
	// Output:
	// devices[1].taints[0].effect: PreferNoSchedule is a node taint's effect, not a device's: None, NoSchedule or NoExecute; entry dropped, the plugin's current t4 devices kept
	// group a100-failing: [{gpu.nvidia.com/xid 79 NoSchedule}]
}
