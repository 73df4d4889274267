// Package kuberules holds the Kubernetes rules that pingstatus and nodeapply
// both enforce: resource names, quantity values and taints, as the API server
// validates them for a Node. Its checks do not allocate on the valid path, so
// nodeapply can run them on every ping; on the invalid path they say what is
// wrong in this library's own words, the same at every Kubernetes release the
// module supports.
package kuberules

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// IsExtendedResourceName reports whether name is an extended resource name:
// domain-prefixed, outside the kubernetes.io domain, not starting with
// "requests.", and a qualified name once "requests." is put before it (the
// form resource quota uses).
func IsExtendedResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) {
		return false // a native resource
	}
	if strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return isQualifiedName(corev1.DefaultResourceRequestsPrefix, s)
}

// ExtendedResourceNameProblem returns why name is not an extended resource
// name, or "" if it is one.
func ExtendedResourceNameProblem(name corev1.ResourceName) string {
	s := string(name)
	switch {
	case s == "":
		return "must not be empty"
	case !strings.Contains(s, "/"):
		return "must be domain-prefixed, like example.com/gpu"
	case strings.Contains(s, corev1.ResourceDefaultNamespacePrefix):
		return "must not be in the kubernetes.io domain"
	case strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix):
		return `must not start with "requests."`
	}
	return qualifiedNameProblem(corev1.DefaultResourceRequestsPrefix, s)
}

// IsIntegerResource reports whether the API server requires whole numbers for
// name: pods, the object counts of resource quota, and extended resources.
func IsIntegerResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourcePods, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceQuotas, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
		corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesNodePorts,
		corev1.ResourceServicesLoadBalancers:
		return true
	}
	return IsExtendedResourceName(name)
}

// QuantityProblem returns why the API server would reject q as the value of
// name in a node's capacity or allocatable, or "" if it would accept it.
// It runs the API server's own arithmetic: not negative, and for integer
// resources a value in thousandths that is a multiple of 1000.
func QuantityProblem(name corev1.ResourceName, q resource.Quantity) string {
	// q is a copy: the methods below may cache inside the value.
	if q.Sign() < 0 {
		return "must not be negative"
	}
	if IsIntegerResource(name) && q.MilliValue()%1000 != 0 {
		return "must be a whole number"
	}
	return ""
}

// QualifiedNameProblem returns why s is not a qualified name (an optional
// DNS subdomain prefix and '/', then a name of at most 63 characters), or ""
// if it is one.
func QualifiedNameProblem(s string) string {
	return qualifiedNameProblem("", s)
}

// ResourceNameProblem returns why name cannot be a resource name in a node's
// capacity (it must be a qualified name, as cpu, hugepages-2Mi and
// nvidia.com/gpu are), or "" if it can.
func ResourceNameProblem(name corev1.ResourceName) string {
	return QualifiedNameProblem(string(name))
}

// HugePageResourceName returns the resource name of huge pages of size,
// as the kubelet names it ("hugepages-2Mi"), or why size is not a page
// size as the kubelet writes one: a power of two below 1024 followed by
// Ki, Mi or Gi (64Ki, 2Mi, 32Mi, 1Gi).
func HugePageResourceName(size string) (corev1.ResourceName, string) {
	const problem = "must be a power of two below 1024 followed by Ki, Mi or Gi, as the kubelet writes a page size (2Mi, 1Gi)"
	if len(size) < 3 || len(size) > 5 {
		return "", problem
	}
	n, unit := size[:len(size)-2], size[len(size)-2:]
	v, err := strconv.Atoi(n)
	switch {
	case unit != "Ki" && unit != "Mi" && unit != "Gi", err != nil, n[0] == '0' || n[0] == '+',
		v <= 0 || v >= 1024 || v&(v-1) != 0:
		return "", problem
	}
	return corev1.ResourceName(corev1.ResourceHugePagesPrefix + size), ""
}
