package kuberules

import (
	"strconv"
	"strings"
)

// The rules of a ResourceSlice's devices (resource.k8s.io/v1) that a
// plugin's device groups must meet, as Kubernetes 1.37's API server
// validates them (pkg/apis/resource/validation), in this library's own
// words. Like the checks of names.go, they do not allocate on the valid
// path. Where the API server is laxer they are stricter: a domain must be
// lowercase, and a name has at most one '/'.
const (
	// MaxDeviceAttributesAndCapacities is the most attributes and
	// capacities a device may have together
	// (ResourceSliceMaxAttributesAndCapacitiesPerDevice).
	MaxDeviceAttributesAndCapacities = 32
	// MaxDeviceAttributeDomainBytes is the longest domain of an attribute
	// or capacity name (DeviceMaxDomainLength).
	MaxDeviceAttributeDomainBytes = 63
	// MaxDeviceAttributeIDBytes is the longest C identifier of an
	// attribute or capacity name (DeviceMaxIDLength).
	MaxDeviceAttributeIDBytes = 32
	// MaxDeviceAttributeValueBytes is the longest string or version value
	// of an attribute (DeviceAttributeMaxValueLength).
	MaxDeviceAttributeValueBytes = 64
	// MaxDeviceTaints is the most taints a device may have
	// (DeviceTaintsMaxLength). A taint's key is a qualified name and its
	// value a label value, as a node taint's ([TaintKeyProblem],
	// [TaintValueProblem]).
	MaxDeviceTaints = 16
)

// The problems, worded to read after "is not a valid attribute name: ".
const (
	problemAttributeSlashes  = "must have at most one '/' (an optional domain like gpu.example.com, '/', then a name)"
	problemAttributeNoDomain = "must have a domain before '/', like gpu.example.com/"
	problemAttributeDomain   = "domain must be a lowercase DNS subdomain, like gpu.example.com"
	problemAttributeID       = "name must be a C identifier: letters, digits and '_', not starting with a digit"
	problemVersion           = "must be a semantic version 2.0.0, like 8.0.0 or 12.4.1-rc.1"
)

// DeviceGroupNameProblem returns why name cannot name a group of devices
// (a DNS label of at most [MaxDeviceGroupNameBytes], so that the name of
// each of its devices, [DeviceName], is a DNS label too), or "" if it can.
func DeviceGroupNameProblem(name string) string {
	return dnsLabelProblem(name, MaxDeviceGroupNameBytes)
}

// DeviceAttributeNameProblem returns why name cannot name a device's
// attribute or capacity, or "" if it can. A name is a C identifier of at
// most [MaxDeviceAttributeIDBytes] ("productName"), which Kubernetes reads
// as in the driver's domain, or a domain, '/' and such an identifier
// ("gpu.nvidia.com/productName"), the domain a lowercase DNS subdomain of
// at most [MaxDeviceAttributeDomainBytes].
func DeviceAttributeNameProblem(name string) string {
	if name == "" {
		return problemEmpty
	}
	domain, id, hasDomain := strings.Cut(name, "/")
	if !hasDomain {
		id = name
	} else {
		switch {
		case strings.Contains(id, "/"):
			return problemAttributeSlashes
		case domain == "":
			return problemAttributeNoDomain
		case len(domain) > MaxDeviceAttributeDomainBytes:
			return "domain must be at most " + strconv.Itoa(MaxDeviceAttributeDomainBytes) + " characters"
		case !isDNS1123Subdomain(domain):
			return problemAttributeDomain
		case id == "":
			return problemNoName
		}
	}
	switch {
	case len(id) > MaxDeviceAttributeIDBytes:
		return "name must be at most " + strconv.Itoa(MaxDeviceAttributeIDBytes) + " characters"
	case !isCIdentifier(id):
		return problemAttributeID
	}
	return ""
}

// DeviceStringProblem returns why s cannot be the string value of a
// device's attribute (it must be at most [MaxDeviceAttributeValueBytes]
// bytes), or "" if it can.
func DeviceStringProblem(s string) string {
	if len(s) > MaxDeviceAttributeValueBytes {
		return "must be at most " + strconv.Itoa(MaxDeviceAttributeValueBytes) + " bytes"
	}
	return ""
}

// DeviceVersionProblem returns why s cannot be the version value of a
// device's attribute (a semantic version 2.0.0 of at most
// [MaxDeviceAttributeValueBytes] bytes), or "" if it can.
func DeviceVersionProblem(s string) string {
	switch {
	case len(s) > MaxDeviceAttributeValueBytes:
		return "must be at most " + strconv.Itoa(MaxDeviceAttributeValueBytes) + " bytes"
	case !isSemver(s):
		return problemVersion
	}
	return ""
}

// isCIdentifier reports whether s matches [A-Za-z_][A-Za-z0-9_]*.
func isCIdentifier(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// isSemver reports whether s is a semantic version 2.0.0, as the API
// server's expression has it:
//
//	^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)
//	(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?
//	(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$
//
// that is, major.minor.patch without leading zeros; then perhaps '-' and
// dot-separated pre-release identifiers, each of letters, digits and '-',
// without leading zeros when all digits; then perhaps '+' and
// dot-separated build identifiers of letters, digits and '-'.
func isSemver(s string) bool {
	i := 0
	for part := range 3 {
		if part > 0 {
			if i >= len(s) || s[i] != '.' {
				return false
			}
			i++
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i || s[i] == '0' && j-i > 1 {
			return false
		}
		i = j
	}
	if i < len(s) && s[i] == '-' {
		if i = identifiers(s, i+1, true); i < 0 {
			return false
		}
	}
	if i < len(s) && s[i] == '+' {
		if i = identifiers(s, i+1, false); i < 0 {
			return false
		}
	}
	return i == len(s)
}

// identifiers reads the dot-separated identifiers of a version's
// pre-release (numeric without leading zeros) or build from s[i:], and
// returns where they end, or -1 if one is empty or has a leading zero.
func identifiers(s string, i int, preRelease bool) int {
	for {
		j, digits := i, true
		for j < len(s) && (isAlnum(s[j]) || s[j] == '-') {
			digits = digits && isDigit(s[j])
			j++
		}
		if j == i || preRelease && digits && s[i] == '0' && j-i > 1 {
			return -1
		}
		if j == len(s) || s[j] != '.' {
			return j
		}
		i = j + 1
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
