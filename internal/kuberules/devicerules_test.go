package kuberules

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"pgregory.net/rapid"
)

// TestDeviceProblemWording pins the library's own words for each way a
// device group name, an attribute or capacity name, and an attribute's
// string or version can be wrong.
func TestDeviceProblemWording(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"group ok", DeviceGroupNameProblem("a100"), ""},
		{"group of 56", DeviceGroupNameProblem(strings.Repeat("a", 56)), ""},
		{"group empty", DeviceGroupNameProblem(""), "must not be empty"},
		{"group of 57", DeviceGroupNameProblem(strings.Repeat("a", 57)), "must be at most 56 characters"},
		{"group upper case", DeviceGroupNameProblem("A100"), "must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit"},
		{"group dot", DeviceGroupNameProblem("a.100"), "must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit"},
		{"group dash last", DeviceGroupNameProblem("a100-"), "must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit"},

		{"attribute short", DeviceAttributeNameProblem("productName"), ""},
		{"attribute underscore", DeviceAttributeNameProblem("_x9"), ""},
		{"attribute with domain", DeviceAttributeNameProblem("gpu.nvidia.com/productName"), ""},
		{"attribute of 32", DeviceAttributeNameProblem(strings.Repeat("a", 32)), ""},
		{"attribute domain of 63", DeviceAttributeNameProblem(strings.Repeat("d", 63) + "/x"), ""},
		{"attribute empty", DeviceAttributeNameProblem(""), "must not be empty"},
		{"attribute two slashes", DeviceAttributeNameProblem("a.io/b/c"), "must have at most one '/' (an optional domain like gpu.example.com, '/', then a name)"},
		{"attribute no domain", DeviceAttributeNameProblem("/x"), "must have a domain before '/', like gpu.example.com/"},
		{"attribute domain of 64", DeviceAttributeNameProblem(strings.Repeat("d", 64) + "/x"), "domain must be at most 63 characters"},
		{"attribute upper domain", DeviceAttributeNameProblem("GPU.example.com/x"), "domain must be a lowercase DNS subdomain, like gpu.example.com"},
		{"attribute domain underscore", DeviceAttributeNameProblem("gpu_example.com/x"), "domain must be a lowercase DNS subdomain, like gpu.example.com"},
		{"attribute no name", DeviceAttributeNameProblem("gpu.example.com/"), "must have a name after '/'"},
		{"attribute of 33", DeviceAttributeNameProblem(strings.Repeat("a", 33)), "name must be at most 32 characters"},
		{"attribute digit first", DeviceAttributeNameProblem("9lives"), "name must be a C identifier: letters, digits and '_', not starting with a digit"},
		{"attribute dash", DeviceAttributeNameProblem("product-name"), "name must be a C identifier: letters, digits and '_', not starting with a digit"},
		{"attribute dot", DeviceAttributeNameProblem("gpu.product"), "name must be a C identifier: letters, digits and '_', not starting with a digit"},

		{"string ok", DeviceStringProblem("NVIDIA A100-SXM4-80GB"), ""},
		{"string empty", DeviceStringProblem(""), ""},
		{"string of 64", DeviceStringProblem(strings.Repeat("s", 64)), ""},
		{"string of 65", DeviceStringProblem(strings.Repeat("s", 65)), "must be at most 64 bytes"},
		{"string of 33 two-byte runes", DeviceStringProblem(strings.Repeat("é", 33)), "must be at most 64 bytes"},

		{"version ok", DeviceVersionProblem("8.0.0"), ""},
		{"version pre-release and build", DeviceVersionProblem("1.0.0-rc.1+build.5"), ""},
		{"version two parts", DeviceVersionProblem("8.0"), "must be a semantic version 2.0.0, like 8.0.0 or 12.4.1-rc.1"},
		{"version leading zero", DeviceVersionProblem("08.0.0"), "must be a semantic version 2.0.0, like 8.0.0 or 12.4.1-rc.1"},
		{"version v", DeviceVersionProblem("v8.0.0"), "must be a semantic version 2.0.0, like 8.0.0 or 12.4.1-rc.1"},
		{"version of 65", DeviceVersionProblem("1.0.0-" + strings.Repeat("a", 59)), "must be at most 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// semverRe is the API server's expression (pkg/apis/resource/validation,
// Kubernetes 1.37), which isSemver is written to agree with.
var semverRe = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

func TestSemver(t *testing.T) {
	for s, want := range map[string]bool{
		"0.0.0": true, "8.0.0": true, "12.4.1": true, "1.0.0-alpha": true, "1.0.0-alpha.1": true, "1.0.0-0.3.7": true,
		"1.0.0-x.7.z.92": true, "1.0.0+20130313144700": true, "1.0.0-beta+exp.sha.5114f85": true, "1.0.0--": true,
		"1.0.0-0a": true, "1.0.0+001": true, "1.0.0-rc-1": true,
		"": false, "1": false, "1.0": false, "1.0.0.0": false, "01.0.0": false, "1.00.0": false, "1.0.00": false,
		"1.0.0-": false, "1.0.0+": false, "1.0.0-01": false, "1.0.0-a..b": false, "1.0.0+a..b": false, "1.0.0-a.": false,
		"1.0.0 ": false, " 1.0.0": false, "1.0.0\n": false, "v1.0.0": false, "1.0.0-a_b": false, "1.0.0+a+b": false, "١.0.0": false,
	} {
		if got := isSemver(s); got != want {
			t.Errorf("isSemver(%q) = %v, want %v", s, got, want)
		}
		if semverRe.MatchString(s) != want {
			t.Errorf("the API server's expression says %v for %q; the table is wrong", !want, s)
		}
	}
}

// versionish draws strings close to the edge of semantic versions.
func versionish() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}([-+][0-9A-Za-z.+-]{0,8})?`),
		rapid.StringMatching(`[0-9.a-z+-]{0,12}`),
		rapid.String(),
	)
}

func TestPropertySemverAgreesWithAPIServer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := versionish().Draw(t, "s")
		if got, want := isSemver(s), semverRe.MatchString(s); got != want {
			t.Fatalf("isSemver(%q) = %v, the API server's expression says %v", s, got, want)
		}
	})
}

// attributeNameByTheBook is the API server's validateQualifiedName for an
// attribute or capacity name, written with apimachinery's allocating
// checks, made as strict as this library: a lowercase domain, one '/'.
func attributeNameByTheBook(s string) bool {
	cIdentifier := func(id string) bool {
		return len(id) <= MaxDeviceAttributeIDBytes && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(id)
	}
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 1:
		return cIdentifier(parts[0])
	case 2:
		domain := parts[0]
		return domain != "" && len(domain) <= 63 && len(validation.IsDNS1123Subdomain(domain)) == 0 && cIdentifier(parts[1])
	}
	return false
}

func TestPropertyDeviceNamesAgreeWithKubernetes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			nameish(),
			rapid.StringMatching(`([a-z0-9.-]{0,8}/)?[A-Za-z0-9_]{0,10}`),
			rapid.StringMatching(`[a-z]{60,64}/[a-z]{30,34}`),
		).Draw(t, "s")
		if got, want := DeviceAttributeNameProblem(s) == "", attributeNameByTheBook(s); got != want {
			t.Fatalf("DeviceAttributeNameProblem(%q) valid = %v, the API server's rules say %v", s, got, want)
		}
		group := len(s) <= MaxDeviceGroupNameBytes && len(validation.IsDNS1123Label(s)) == 0
		if got := DeviceGroupNameProblem(s) == ""; got != group {
			t.Fatalf("DeviceGroupNameProblem(%q) valid = %v, want %v", s, got, group)
		}
		if got := DeviceGroupNameProblem(s) == ""; got && len(validation.IsDNS1123Label(DeviceName(s, MaxDeviceIndex))) != 0 {
			t.Fatalf("group %q is valid, but its device %s is not a DNS label", s, DeviceName(s, MaxDeviceIndex))
		}
	})
}

func TestDeviceChecksDoNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		_ = DeviceGroupNameProblem("a100")
		_ = DeviceAttributeNameProblem("productName")
		_ = DeviceAttributeNameProblem("gpu.nvidia.com/cudaComputeCapability")
		_ = DeviceStringProblem("NVIDIA A100-SXM4-80GB")
		_ = DeviceVersionProblem("12.4.1-rc.1+build.7")
	})
	if allocs != 0 {
		t.Errorf("valid-path device checks allocate %v times, want 0", allocs)
	}
}
