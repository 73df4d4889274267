// Package gen holds the rapid generators that the tests of pingstatus and
// nodeapply share: valid names, quantities, taints and device groups,
// adversarial reply bodies, and nodes.
package gen

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/kuberules"
)

// SharedKeys are taint keys that both plugins and administrators draw from,
// so that generated plugin taints and foreign taints collide often.
var SharedKeys = []string{
	"vendor.io/maintenance",
	"example.com/drain",
	"admin.example.org/hold",
	"gpu.example.com/degraded",
}

// TaintKey draws a valid taint key that neither Kubernetes controllers nor
// the provider own: often one of [SharedKeys], sometimes a fresh one.
func TaintKey() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom(SharedKeys),
		rapid.Custom(func(t *rapid.T) string {
			prefix := rapid.StringMatching(`[a-z]{1,8}(\.[a-z0-9]{1,6}){0,2}`).Draw(t, "prefix")
			name := rapid.StringMatching(`[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?`).Draw(t, "name")
			if rapid.Bool().Draw(t, "bare") {
				return name
			}
			return prefix + "/" + name
		}).Filter(func(k string) bool { return !kuberules.IsReservedKey(k) && !kuberules.IsProtectedKey(k, nil) }),
	)
}

// TaintValue draws a valid taint value, possibly empty.
func TaintValue() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"", "true", "maintenance", "low"}),
		rapid.StringMatching(`[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?`),
	)
}

// Effect draws one of the three valid effects.
func Effect() *rapid.Generator[corev1.TaintEffect] {
	return rapid.SampledFrom([]corev1.TaintEffect{
		corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute,
	})
}

// Taint draws a valid taint with a key from [TaintKey].
func Taint() *rapid.Generator[corev1.Taint] {
	return rapid.Custom(func(t *rapid.T) corev1.Taint {
		return corev1.Taint{Key: TaintKey().Draw(t, "key"), Value: TaintValue().Draw(t, "value"), Effect: Effect().Draw(t, "effect")}
	})
}

// UniqueTaints draws up to max valid taints, unique by key and effect.
func UniqueTaints(max int) *rapid.Generator[[]corev1.Taint] {
	return rapid.Custom(func(t *rapid.T) []corev1.Taint {
		all := rapid.SliceOfN(Taint(), 0, max).Draw(t, "taints")
		seen := map[kuberules.TaintID]bool{}
		out := []corev1.Taint{}
		for _, taint := range all {
			if id := kuberules.IDOf(&taint); !seen[id] {
				seen[id] = true
				out = append(out, taint)
			}
		}
		return out
	})
}

// LabelNamespaces are the namespaces, besides the defaults, that tests
// allow their plugins' labels in.
var LabelNamespaces = []string{"nvidia.com"}

// SharedLabelKeys are label keys that both plugins and administrators draw
// from, so that generated plugin labels and foreign ones collide often;
// each is in [LabelNamespaces] or a default namespace.
var SharedLabelKeys = []string{
	"nvidia.com/gpu.product",
	"nvidia.com/gpu.count",
	"feature.node.kubernetes.io/cpu-model.vendor_id",
	"feature.node.kubernetes.io/custom-cvmfs",
}

// LabelKey draws a label key a plugin may set under [LabelNamespaces]:
// often one of [SharedLabelKeys], sometimes a fresh one.
func LabelKey() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom(SharedLabelKeys),
		rapid.Custom(func(t *rapid.T) string {
			prefix := rapid.SampledFrom([]string{"feature.node.kubernetes.io", "profile.node.kubernetes.io", "nvidia.com", "gpu.nvidia.com"}).Draw(t, "namespace")
			return prefix + "/" + rapid.StringMatching(`[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?`).Draw(t, "name")
		}),
	)
}

// Labels draws up to max labels a plugin may set under [LabelNamespaces].
func Labels(max int) *rapid.Generator[map[string]string] {
	return rapid.MapOfN(LabelKey(), TaintValue(), 0, max)
}

// ExtendedResourceName draws a valid extended resource name.
func ExtendedResourceName() *rapid.Generator[corev1.ResourceName] {
	return rapid.OneOf(
		rapid.SampledFrom([]corev1.ResourceName{"nvidia.com/gpu", "amd.com/gpu", "xilinx.com/fpga", "intel.com/fpga"}),
		rapid.Custom(func(t *rapid.T) corev1.ResourceName {
			return corev1.ResourceName(rapid.StringMatching(`[a-z]{1,8}\.(com|io|org)/[a-z][-a-z0-9]{0,8}[a-z0-9]`).Draw(t, "name"))
		}),
	)
}

// PositiveQuantity draws a valid, non-zero quantity string for cpu or
// memory, in the spellings plugins use, small enough for either.
func PositiveQuantity() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(1, 1<<20).Draw(t, "n")
		suffix := rapid.SampledFrom([]string{"", "m", "k", "M", "G", "Ki", "Mi", "Gi"}).Draw(t, "suffix")
		return fmt.Sprint(n) + suffix
	})
}

// WholeQuantity draws a whole number of at least min as a quantity string.
func WholeQuantity(min int) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(min, 100000).Draw(t, "n")
		if n >= 1000 && n%1000 == 0 && rapid.Bool().Draw(t, "k") {
			return fmt.Sprint(n/1000) + "k"
		}
		return fmt.Sprint(n)
	})
}

// ReplyBody draws an adversarial reply body: mostly JSON objects mixing
// valid fields with wrong types, negative, zero, fractional and huge values,
// bad and reserved names, duplicates and unknown fields, device groups with
// every kind of mistake among them; sometimes a legacy body or a truncated
// object.
func ReplyBody() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		switch rapid.IntRange(0, 9).Draw(t, "shape") {
		case 0:
			return []byte(rapid.SampledFrom([]string{"ok", "0", "", "null", "[]", `"ok"`, "sinfo\n"}).Draw(t, "legacy"))
		case 1:
			b := replyObject(t)
			return b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
		}
		return replyObject(t)
	})
}

func replyObject(t *rapid.T) []byte {
	reply := nodeFields(t)
	if rapid.Bool().Draw(t, "has status") {
		reply["status"] = rapid.SampledFrom([]any{"ok", "healthy", 3, nil}).Draw(t, "status")
	}
	if rapid.IntRange(0, 3).Draw(t, "has nodes") == 0 {
		reply["nodes"] = partsValue(t)
	}
	b, err := json.Marshal(reply)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// NodeFields draws an adversarial JSON object of a node's fields, as a
// reply or a part has them: resources, taints, labels and devices, valid
// or not, and an unknown field; no status, no name and no parts.
func NodeFields() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		b, err := json.Marshal(nodeFields(t))
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		return b
	})
}

func nodeFields(t *rapid.T) map[string]any {
	reply := map[string]any{}
	if rapid.IntRange(0, 3).Draw(t, "has resources") > 0 {
		reply["resources"] = resourcesValue(t)
	}
	if rapid.IntRange(0, 3).Draw(t, "has taints") > 0 {
		reply["taints"] = taintsValue(t)
	}
	if rapid.Bool().Draw(t, "has unknown") {
		reply["message"] = "sidecar is alive"
	}
	if rapid.IntRange(0, 3).Draw(t, "has labels") > 0 {
		reply["labels"] = labelsValue(t)
	}
	if rapid.IntRange(0, 3).Draw(t, "has devices") > 0 {
		reply["devices"] = devicesValue(t)
	}
	return reply
}

// partsValue draws a JSON value for a reply's parts: a list of entries
// with the fields of a reply, valid or not, names repeated, missing or
// invalid, fields at the wrong level; or a value that is no list.
func partsValue(t *rapid.T) any {
	switch rapid.IntRange(0, 9).Draw(t, "parts shape") {
	case 0:
		return nil
	case 1:
		return []any{}
	case 2:
		return "cn001"
	}
	parts := make([]any, rapid.IntRange(0, 4).Draw(t, "parts"))
	for i := range parts {
		if rapid.IntRange(0, 9).Draw(t, "part wrong type") == 0 {
			parts[i] = "cn001"
			continue
		}
		part := nodeFields(t)
		if rapid.IntRange(0, 9).Draw(t, "has name") > 0 {
			part["name"] = rapid.SampledFrom([]any{"cn001", "cn002", "gpu-a100", "CN_001", "", "-a", strings.Repeat("n", 64), 7, nil}).Draw(t, "name")
		}
		if rapid.IntRange(0, 5).Draw(t, "part has misplaced") == 0 {
			part[rapid.SampledFrom([]string{"cpu", "nodes", "names", "status", "state"}).Draw(t, "misplaced")] = "4"
		}
		parts[i] = part
	}
	return parts
}

// quantityValue draws a JSON value for a quantity: valid or not.
func quantityValue(t *rapid.T, label string) any {
	return rapid.OneOf(
		rapid.Just[any](nil),
		rapid.Map(PositiveQuantity(), func(s string) any { return s }),
		rapid.Map(WholeQuantity(0), func(s string) any { return s }),
		rapid.SampledFrom([]any{"0", "0Gi", 0.0, "0.0"}),
		rapid.SampledFrom([]any{
			"-1", "-4Gi", "1.5", "500m", "0.5", "1e30", "100Ei", "10P", "1e19", "9223372036854775", "9223372036854776",
			"abc", "12 GB", "", "+8", ".5", "1e3", "1E3", "0x10", 128.0, -3.0, 2.5, 1e300, true, []any{"1"}, map[string]any{},
		}),
	).Draw(t, label)
}

func resourcesValue(t *rapid.T) any {
	if rapid.IntRange(0, 9).Draw(t, "resources wrong type") == 0 {
		return "128 cores"
	}
	res := map[string]any{}
	for _, name := range []string{"cpu", "memory", "pods"} {
		if rapid.Bool().Draw(t, "has "+name) {
			res[name] = quantityValue(t, name)
		}
	}
	if rapid.IntRange(0, 3).Draw(t, "has basis") == 0 {
		res["basis"] = rapid.SampledFrom([]any{"available", "total", "free", 1, nil}).Draw(t, "basis")
	}
	if rapid.Bool().Draw(t, "has accelerators") {
		n := rapid.IntRange(0, 6).Draw(t, "accelerators")
		accs := make([]any, n)
		for i := range accs {
			accs[i] = map[string]any{
				"resourceType": rapid.OneOf(
					rapid.Map(ExtendedResourceName(), func(n corev1.ResourceName) any { return string(n) }),
					rapid.SampledFrom([]any{"nvidia.com/gpu", "gpu", "kubernetes.io/gpu", "requests.a.io/gpu", "A.io/gpu", "", 7}),
				).Draw(t, "resourceType"),
				"available": quantityValue(t, "available"),
			}
		}
		res["accelerators"] = accs
	}
	return res
}

func taintsValue(t *rapid.T) any {
	switch rapid.IntRange(0, 9).Draw(t, "taints shape") {
	case 0:
		return nil
	case 1:
		return []any{}
	case 2:
		return "none"
	}
	n := rapid.IntRange(0, 8).Draw(t, "taints")
	taints := make([]any, n)
	for i := range taints {
		entry := map[string]any{
			"key": rapid.OneOf(
				rapid.Map(TaintKey(), func(k string) any { return k }),
				rapid.SampledFrom([]any{
					"node.kubernetes.io/unschedulable", "node-role.kubernetes.io/x", kuberules.DefaultProtectedKey, kuberules.BackendFullTaintKey,
					"not a key", "", "Upper.IO/x", strings.Repeat("k", 64), false,
				}),
			).Draw(t, "key"),
			"value": rapid.OneOf(
				rapid.Map(TaintValue(), func(v string) any { return v }),
				rapid.SampledFrom([]any{"has spaces", strings.Repeat("v", 64), 1, nil}),
			).Draw(t, "value"),
		}
		if rapid.IntRange(0, 5).Draw(t, "has effect") > 0 {
			entry["effect"] = rapid.OneOf(
				rapid.Map(Effect(), func(e corev1.TaintEffect) any { return string(e) }),
				rapid.SampledFrom([]any{"", "noschedule", "Evict", 3}),
			).Draw(t, "effect")
		}
		taints[i] = entry
	}
	return taints
}

func labelsValue(t *rapid.T) any {
	switch rapid.IntRange(0, 9).Draw(t, "labels shape") {
	case 0:
		return nil
	case 1:
		return map[string]any{}
	case 2:
		return []any{"gpu"}
	}
	labels := map[string]any{}
	for range rapid.IntRange(0, 8).Draw(t, "labels") {
		key := rapid.OneOf(
			LabelKey(),
			rapid.SampledFrom([]string{
				"kubernetes.io/hostname", "node-restriction.kubernetes.io/dedicated", "topology.kubernetes.io/zone",
				"k8s.io/x", "dedicated", "example.org/not-allowed", "Upper.io/x", "a.io/", strings.Repeat("l", 64), "",
			}),
		).Draw(t, "label key")
		labels[key] = rapid.OneOf(
			rapid.Map(TaintValue(), func(v string) any { return v }),
			rapid.SampledFrom([]any{"has spaces", strings.Repeat("v", 64), 8, true, nil}),
		).Draw(t, "label value")
	}
	return labels
}

// RoomReply draws a reply as interLink's Slurm plugin sends it at each
// ping, and its neighbours: free cpu and memory (its sum over the
// cluster), each often "0", the cluster full, sometimes absent or not a
// quantity, with a basis or none, before or after them, now and then
// with pods of zero or a taint with pingnode's backend-full key; or a
// reply with no news of cpu and memory: a legacy body, a status alone,
// resources without cpu and memory.
func RoomReply() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		switch rapid.IntRange(0, 7).Draw(t, "room shape") {
		case 0:
			return []byte(rapid.SampledFrom([]string{"ok", "", "null", "[]"}).Draw(t, "legacy"))
		case 1:
			return []byte(rapid.SampledFrom([]string{`{"status":"ok"}`, `{"status":"ok","resources":{}}`, `{"status":"ok","resources":{"pods":"10"}}`}).Draw(t, "no news"))
		}
		var fields []string
		for _, name := range []string{"cpu", "memory"} {
			v := rapid.SampledFrom([]string{`"0"`, `"0"`, `0`, `"0Mi"`, `"24"`, `"96000Mi"`, `"1200Mi"`, `"-1"`, `"many"`, ``}).Draw(t, name)
			if v != "" {
				fields = append(fields, `"`+name+`":`+v)
			}
		}
		if rapid.IntRange(0, 4).Draw(t, "has pods") == 0 {
			fields = append(fields, `"pods":`+rapid.SampledFrom([]string{`"0"`, `"90"`}).Draw(t, "pods"))
		}
		if basis := rapid.SampledFrom([]string{"", "", `"available"`, `"total"`, `"free"`}).Draw(t, "basis"); basis != "" {
			at := rapid.IntRange(0, len(fields)).Draw(t, "basis at")
			fields = append(fields[:at], append([]string{`"basis":` + basis}, fields[at:]...)...)
		}
		reply := `{"status":"ok","resources":{` + strings.Join(fields, ",") + `}`
		if rapid.IntRange(0, 5).Draw(t, "has taints") == 0 {
			reply += `,"taints":[{"key":"` + kuberules.BackendFullTaintKey + `","value":"cpu","effect":"NoSchedule"}]`
		}
		return []byte(reply + "}")
	})
}

// Node draws a valid node as a provider might hold it: capacity and
// allocatable, labels (an administrator's among them, with keys a plugin
// may also set), and foreign taints (an administrator's, a
// controller's, the provider's protected one), unique by key and effect.
func Node() *rapid.Generator[*corev1.Node] {
	return rapid.Custom(func(t *rapid.T) *corev1.Node {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:            "vk-" + rapid.StringMatching(`[a-z]{1,8}`).Draw(t, "name"),
				ResourceVersion: fmt.Sprint(rapid.IntRange(1, 1000).Draw(t, "resourceVersion")),
				Labels:          map[string]string{"type": "virtual-kubelet"},
			},
		}
		if rapid.IntRange(0, 9).Draw(t, "nil maps") == 0 {
			node.Labels = nil
			return node
		}
		capacity := corev1.ResourceList{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
			if rapid.IntRange(0, 4).Draw(t, "has "+string(name)) > 0 {
				capacity[name] = resource.MustParse(WholeQuantity(1).Draw(t, string(name)))
			}
		}
		for range rapid.IntRange(0, 2).Draw(t, "extended") {
			capacity[ExtendedResourceName().Draw(t, "extended name")] = resource.MustParse(WholeQuantity(0).Draw(t, "extended value"))
		}
		node.Status.Capacity = capacity
		node.Status.Allocatable = capacity.DeepCopy()
		if cpu, ok := capacity[corev1.ResourceCPU]; ok && rapid.Bool().Draw(t, "reserved cpu") {
			cpu.Sub(resource.MustParse("500m")) // allocatable below capacity, as a kubelet reports it
			node.Status.Allocatable[corev1.ResourceCPU] = cpu
		}
		taints := UniqueTaints(4).Draw(t, "admin taints")
		if rapid.Bool().Draw(t, "protected") {
			taints = append(taints, corev1.Taint{Key: kuberules.DefaultProtectedKey, Value: "true", Effect: corev1.TaintEffectNoSchedule})
		}
		if rapid.Bool().Draw(t, "controller") {
			taints = append(taints, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
		}
		if len(taints) > 0 {
			node.Spec.Taints = taints
		}
		for _, key := range rapid.SliceOfNDistinct(rapid.SampledFrom(SharedLabelKeys), 0, 2, rapid.ID).Draw(t, "admin labels") {
			node.Labels[key] = TaintValue().Draw(t, "admin label value")
		}
		return node
	})
}

// Conditions draws a node's conditions: some of the kubelet's types (the
// pressure conditions among them), NetworkUnavailable, interLink's
// obsolete OutOfDisk, a custom one, and perhaps Ready and the connectivity
// condition of type connectivity, in any status, with any reason (interLink's
// and pingnode's among them), heartbeat and transition times around t0.
func Conditions(connectivity corev1.NodeConditionType, t0 time.Time) *rapid.Generator[[]corev1.NodeCondition] {
	return rapid.Custom(func(t *rapid.T) []corev1.NodeCondition {
		types := []corev1.NodeConditionType{
			corev1.NodeReady, connectivity, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure,
			corev1.NodeNetworkUnavailable, "OutOfDisk", "example.com/Custom",
		}
		var conditions []corev1.NodeCondition
		for _, i := range rapid.Permutation([]int{0, 1, 2, 3, 4, 5, 6, 7}).Draw(t, "order") {
			if !rapid.Bool().Draw(t, "has "+string(types[i])) {
				continue
			}
			when := func(label string) metav1.Time {
				return metav1.NewTime(t0.Add(time.Duration(rapid.IntRange(-3600, 60).Draw(t, label)) * time.Second))
			}
			conditions = append(conditions, corev1.NodeCondition{
				Type:               types[i],
				Status:             rapid.SampledFrom([]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}).Draw(t, "status"),
				Reason:             rapid.SampledFrom([]string{"KubeletReady", "KubeletPending", "RouteCreated", "PluginReachable", "PluginUnreachable", "PluginUnreachableKeepingPods", "InterlinkPingFailed", "NodeStatusUnknown", "VirtualNode", ""}).Draw(t, "reason"),
				Message:            rapid.SampledFrom([]string{"", "Interlink is ready", "the plugin answers its pings", "Kubelet stopped posting node status."}).Draw(t, "message"),
				LastHeartbeatTime:  when("heartbeat"),
				LastTransitionTime: when("transition"),
			})
		}
		return conditions
	})
}
