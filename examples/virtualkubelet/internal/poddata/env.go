package poddata

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// env resolves c's environment in place: envFrom's variables first, then
// env's, which win, each with its value; c keeps no valueFrom and no
// envFrom.
func (r *reader) env(c *corev1.Container) error {
	var out []corev1.EnvVar
	at := map[string]int{}
	set := func(name, value string) {
		if i, ok := at[name]; ok {
			out[i].Value = value
			return
		}
		at[name] = len(out)
		out = append(out, corev1.EnvVar{Name: name, Value: value})
	}
	for _, from := range c.EnvFrom {
		values, err := r.envFrom(from)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(values)) {
			set(from.Prefix+k, values[k])
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, e.Value)
			continue
		}
		v, ok, err := r.valueFrom(e.ValueFrom, c.Name)
		if err != nil {
			return fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	c.Env, c.EnvFrom = out, nil
	return nil
}

// envFrom returns the values of one envFrom source; none for an
// optional one that is missing.
func (r *reader) envFrom(from corev1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		c, err := r.configMap(from.ConfigMapRef.Name, from.ConfigMapRef.Optional)
		if err != nil || c == nil {
			return nil, err
		}
		return c.Data, nil
	case from.SecretRef != nil:
		s, err := r.secret(from.SecretRef.Name, from.SecretRef.Optional)
		if err != nil || s == nil {
			return nil, err
		}
		return asStrings(s.Data), nil
	}
	return nil, nil
}

// valueFrom returns the value of one variable of container, and whether
// it has one (an optional key that is missing has none).
func (r *reader) valueFrom(from *corev1.EnvVarSource, container string) (string, bool, error) {
	switch {
	case from.FieldRef != nil:
		v, err := field(r.pod, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		v, err := r.resource(from.ResourceFieldRef, container)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		c, err := r.configMap(ref.Name, ref.Optional)
		if err != nil || c == nil {
			return "", false, err
		}
		return r.key(c.Data, ref.Key, ref.Optional, "ConfigMap", ref.Name)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := r.secret(ref.Name, ref.Optional)
		if err != nil || s == nil {
			return "", false, err
		}
		return r.key(asStrings(s.Data), ref.Key, ref.Optional, "Secret", ref.Name)
	}
	return "", false, nil
}

// key returns the value of key in values, those of the object name of
// kind, and whether it has one: a missing key is a [Missing] unless
// optional.
func (r *reader) key(values map[string]string, key string, optional *bool, kind, name string) (string, bool, error) {
	v, ok := values[key]
	if !ok && !isTrue(optional) {
		return "", false, Missing{Words: fmt.Sprintf("couldn't find key %s in %s %s/%s", key, kind, r.pod.Namespace, name)}
	}
	return v, ok, nil
}

// subscript is a field path of one label or annotation:
// metadata.labels['key'].
var subscript = regexp.MustCompile(`^metadata\.(labels|annotations)\['(.+)'\]$`)

// field returns the value of the downward API's field path of pod, as a
// kubelet gives it: a whole map as its lines key="value", sorted.
func field(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.hostIPs":
		return joinIPs(pod.Status.HostIPs, func(ip corev1.HostIP) string { return ip.IP }), nil
	case "status.podIPs":
		return joinIPs(pod.Status.PodIPs, func(ip corev1.PodIP) string { return ip.IP }), nil
	}
	if m := subscript.FindStringSubmatch(path); m != nil {
		if m[1] == "labels" {
			return pod.Labels[m[2]], nil
		}
		return pod.Annotations[m[2]], nil
	}
	return "", fmt.Errorf("unsupported field path %q", path)
}

// formatMap is m as the kubelet writes a map of the downward API.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(k + "=" + strconv.Quote(m[k]) + "\n")
	}
	return b.String()
}

func joinIPs[T any](ips []T, ip func(T) string) string {
	out := make([]string, len(ips))
	for i, v := range ips {
		out[i] = ip(v)
	}
	return strings.Join(out, ",")
}

// resource returns the request or limit ref names, of its container or
// else of container, divided by its divisor and rounded up, as the
// kubelet gives it: a limit the container does not set is the node's
// allocatable, and a request it does not set is 0.
func (r *reader) resource(ref *corev1.ResourceFieldSelector, container string) (string, error) {
	if ref.ContainerName != "" {
		container = ref.ContainerName
	}
	var c *corev1.Container
	for i := range r.pod.Spec.Containers {
		if r.pod.Spec.Containers[i].Name == container {
			c = &r.pod.Spec.Containers[i]
		}
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if c == nil || !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported resource %q of container %q", ref.Resource, container)
	}
	q := c.Resources.Requests[corev1.ResourceName(name)]
	if kind == "limits" {
		var set bool
		if q, set = c.Resources.Limits[corev1.ResourceName(name)]; !set && r.node != nil {
			q = r.node.Status.Allocatable[corev1.ResourceName(name)]
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == string(corev1.ResourceCPU) {
		return strconv.FormatInt(ceilDiv(q.MilliValue(), divisor.MilliValue()), 10), nil
	}
	return strconv.FormatInt(ceilDiv(q.Value(), divisor.Value()), 10), nil
}

// ceilDiv is a/b rounded up, for a ≥ 0 and b > 0.
func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
