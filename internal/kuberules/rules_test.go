package kuberules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"pgregory.net/rapid"
)

// nameish draws strings close to the edge of the name rules: short runs of
// the characters that matter, sometimes long.
func nameish() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[a-zA-Z0-9._/-]{0,12}`),
		rapid.StringMatching(`[a-z0-9-]{1,70}(\.[a-z0-9-]{1,70}){0,4}/[A-Za-z0-9._-]{0,70}`),
		rapid.StringMatching(`[a-z]{60,64}`),
		rapid.String(),
	)
}

func TestPropertyQualifiedNameAgreesWithAPIMachinery(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := nameish().Draw(t, "s")
		want := len(validation.IsQualifiedName(s)) == 0
		if got := isQualifiedName("", s); got != want {
			t.Fatalf("isQualifiedName(%q) = %v, apimachinery says %v", s, got, want)
		}
		if got := TaintKeyProblem(s) == ""; got != want {
			t.Fatalf("TaintKeyProblem(%q) valid = %v, apimachinery says %v", s, got, want)
		}
	})
}

func TestPropertyLabelValueAgreesWithAPIMachinery(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := nameish().Draw(t, "s")
		want := len(validation.IsValidLabelValue(s)) == 0
		if got := labelValueProblem(s) == ""; got != want {
			t.Fatalf("labelValueProblem(%q) valid = %v, apimachinery says %v", s, got, want)
		}
	})
}

// extendedByTheBook is Kubernetes' definition, written with apimachinery's
// allocating checks, to hold the fast one to it.
func extendedByTheBook(s string) bool {
	native := !contains(s, "/") || contains(s, "kubernetes.io/")
	if native || hasPrefix(s, "requests.") {
		return false
	}
	return len(validation.IsQualifiedName("requests."+s)) == 0
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func TestPropertyExtendedResourceNameAgreesWithKubernetes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := nameish().Draw(t, "s")
		want := extendedByTheBook(s)
		if got := IsExtendedResourceName(corev1.ResourceName(s)); got != want {
			t.Fatalf("IsExtendedResourceName(%q) = %v, want %v", s, got, want)
		}
		if got := ExtendedResourceNameProblem(corev1.ResourceName(s)) == ""; got != want {
			t.Fatalf("ExtendedResourceNameProblem(%q) valid = %v, want %v", s, got, want)
		}
	})
}

func TestExtendedResourceName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"nvidia.com/gpu", true},
		{"amd.com/gpu", true},
		{"xilinx.com/fpga", true},
		{"intel.com/fpga", true},
		{"example.com/anything", true},
		{"gpu", false},
		{"kubernetes.io/gpu", false},
		{"foo.kubernetes.io/gpu", false},
		{"requests.example.com/gpu", false},
		{"Example.com/gpu", false},
		{"example.com/", false},
		{"example.com/a/b", false},
		{"/gpu", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsExtendedResourceName(corev1.ResourceName(tt.name)); got != tt.want {
				t.Errorf("IsExtendedResourceName(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestQuantityProblem(t *testing.T) {
	tests := []struct {
		name     corev1.ResourceName
		quantity string
		want     string
	}{
		{corev1.ResourceCPU, "1500m", ""},
		{corev1.ResourceCPU, "-1", "must not be negative"},
		{corev1.ResourceMemory, "0", ""},
		{corev1.ResourcePods, "110", ""},
		{corev1.ResourcePods, "1.5", "must be a whole number"},
		{corev1.ResourcePods, "1500m", "must be a whole number"},
		{"nvidia.com/gpu", "2", ""},
		{"nvidia.com/gpu", "0.5", "must be a whole number"},
		{"nvidia.com/gpu", "1k", ""},
		{corev1.ResourceEphemeralStorage, "0.5", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.name)+"="+tt.quantity, func(t *testing.T) {
			if got := QuantityProblem(tt.name, resource.MustParse(tt.quantity)); got != tt.want {
				t.Errorf("QuantityProblem(%s, %s) = %q, want %q", tt.name, tt.quantity, got, tt.want)
			}
		})
	}
}

func TestTaintKeys(t *testing.T) {
	for _, key := range []string{"node.kubernetes.io/unreachable", "node.cloudprovider.kubernetes.io/uninitialized", "node-role.kubernetes.io/control-plane", UnreachableTaintKey, PartGoneTaintKey, BackendFullTaintKey} {
		if !IsReservedKey(key) {
			t.Errorf("IsReservedKey(%q) = false, want true", key)
		}
	}
	for _, key := range []string{"vendor.io/maintenance", "kubernetes.io/arch", DefaultProtectedKey, "pingnode.io/plugin-taints", UnreachableTaintKey + "-not", PartGoneTaintKey + "s", BackendFullTaintKey + "-soon", "pingnode.io/backend"} {
		if IsReservedKey(key) {
			t.Errorf("IsReservedKey(%q) = true, want false", key)
		}
	}
	if !IsProtectedKey(DefaultProtectedKey, nil) {
		t.Errorf("IsProtectedKey(%q, nil) = false, want true", DefaultProtectedKey)
	}
	if !IsProtectedKey("mine.io/static", []string{"mine.io/static"}) || IsProtectedKey("mine.io/other", []string{"mine.io/static"}) {
		t.Error("IsProtectedKey does not honour the extra keys")
	}
}

func TestChecksDoNotAllocate(t *testing.T) {
	q := resource.MustParse("8")
	allocs := testing.AllocsPerRun(100, func() {
		_ = IsExtendedResourceName("nvidia.com/gpu")
		_ = TaintKeyProblem("vendor.example.com/maintenance")
		_ = TaintValueProblem("true")
		_ = QuantityProblem("nvidia.com/gpu", q)
	})
	if allocs != 0 {
		t.Errorf("valid-path checks allocate %v times, want 0", allocs)
	}
}

func TestNodeProblems(t *testing.T) {
	valid := &corev1.Node{
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: "a.io/x", Value: "1", Effect: corev1.TaintEffectNoSchedule},
			{Key: "a.io/x", Effect: corev1.TaintEffectNoExecute},
		}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{"cpu": resource.MustParse("1500m"), "pods": resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("0")},
			Allocatable: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")},
		},
	}
	if p := NodeProblems(valid); p != nil {
		t.Errorf("NodeProblems(valid) = %v, want nil", p)
	}
	if p := NodeProblems(nil); p != nil {
		t.Errorf("NodeProblems(nil) = %v, want nil", p)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = NodeProblems(valid) }); allocs != 0 {
		t.Errorf("NodeProblems(valid) allocates %v times, want 0", allocs)
	}
	invalid := valid.DeepCopy()
	invalid.Status.Capacity["pods"] = resource.MustParse("1.5")
	invalid.Status.Allocatable["memory"] = resource.MustParse("-1")
	invalid.Spec.Taints = append(invalid.Spec.Taints,
		corev1.Taint{Key: "bad key", Effect: corev1.TaintEffectNoSchedule},
		corev1.Taint{Key: "a.io/y", Value: "bad value", Effect: ""},
		corev1.Taint{Key: "a.io/x", Value: "2", Effect: corev1.TaintEffectNoSchedule},
	)
	want := []string{
		"spec.taints[a.io/x:NoSchedule]: taints must be unique by key and effect",
		"spec.taints[a.io/y:]: effect must be NoSchedule, PreferNoSchedule or NoExecute",
		"spec.taints[a.io/y:]: value " + TaintValueProblem("bad value"),
		"spec.taints[bad key:NoSchedule]: key " + TaintKeyProblem("bad key"),
		"status.allocatable[memory]: -1 must not be negative",
		"status.capacity[pods]: 1500m must be a whole number",
	}
	got := NodeProblems(invalid)
	if len(got) != len(want) {
		t.Fatalf("NodeProblems(invalid) =\n%q\nwant\n%q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("problem %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestFirstRepeatManyTaints(t *testing.T) {
	var taints []corev1.Taint
	for i := range 40 {
		taints = append(taints, corev1.Taint{Key: "a.io/k" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Effect: corev1.TaintEffectNoSchedule})
	}
	if i, j := FirstRepeat(taints); i != -1 || j != -1 {
		t.Fatalf("FirstRepeat(unique) = %d, %d", i, j)
	}
	taints = append(taints, taints[7])
	if i, j := FirstRepeat(taints); i != 7 || j != 40 {
		t.Errorf("FirstRepeat = %d, %d, want 7, 40", i, j)
	}
}

// TestNameProblemWording pins the library's own words for each way a name or
// value can be wrong, so that they do not depend on the apimachinery release.
func TestNameProblemWording(t *testing.T) {
	long := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a'
		}
		return string(b)
	}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"key empty", TaintKeyProblem(""), "must not be empty"},
		{"key bare ok", TaintKeyProblem("maintenance"), ""},
		{"key two slashes", TaintKeyProblem("a.io/b/c"), "must have at most one '/' (an optional prefix like example.com, '/', then a name)"},
		{"key empty prefix", TaintKeyProblem("/x"), "must have a prefix before '/', like example.com/"},
		{"key upper prefix", TaintKeyProblem("Vendor.IO/x"), "prefix must be a lowercase DNS subdomain, like example.com"},
		{"key long prefix", TaintKeyProblem(long(254) + "/x"), "prefix must be at most 253 characters"},
		{"key empty name", TaintKeyProblem("a.io/"), "must have a name after '/'"},
		{"key long name", TaintKeyProblem("a.io/" + long(64)), "name must be at most 63 characters"},
		{"key space", TaintKeyProblem("not a key"), "name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit"},
		{"value empty ok", TaintValueProblem(""), ""},
		{"value long", TaintValueProblem(long(64)), "must be at most 63 characters"},
		{"value space", TaintValueProblem("has spaces"), "must be empty, or letters, digits, '-', '_' and '.' starting and ending with a letter or digit"},
		{"extended long prefix", ExtendedResourceNameProblem(corev1.ResourceName(long(245) + "/gpu")), "prefix must be at most 244 characters"},
		{"extended two slashes", ExtendedResourceNameProblem("example.com/a/b"), "must have at most one '/' (an optional prefix like example.com, '/', then a name)"},
		{"extended empty name", ExtendedResourceNameProblem("example.com/"), "must have a name after '/'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestHugePageResourceName(t *testing.T) {
	for size, want := range map[string]string{
		"2Mi": "hugepages-2Mi", "1Gi": "hugepages-1Gi", "64Ki": "hugepages-64Ki", "512Mi": "hugepages-512Mi",
		"3Mi": "", "1024Ki": "", "2097152": "", "2M": "", "02Mi": "", "+2Mi": "", "0Mi": "", "2Ti": "", "": "", "Mi": "",
	} {
		name, problem := HugePageResourceName(size)
		if string(name) != want || (problem == "") != (want != "") {
			t.Errorf("HugePageResourceName(%q) = %q, %q; want %q", size, name, problem, want)
		}
	}
}
