package pingstatus_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

var equateQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// wireReply draws any PingResponse, valid or not: the wire types must carry
// whatever a plugin puts in them.
func wireReply() *rapid.Generator[pingstatus.PingResponse] {
	str := rapid.String()
	return rapid.Custom(func(t *rapid.T) pingstatus.PingResponse {
		var r pingstatus.PingResponse
		r.Status = str.Draw(t, "status")
		if rapid.Bool().Draw(t, "resources") {
			r.Resources = &pingstatus.ResourcesResponse{CPU: str.Draw(t, "cpu"), Memory: str.Draw(t, "memory"), Pods: str.Draw(t, "pods")}
			for range rapid.IntRange(0, 3).Draw(t, "accelerators") {
				r.Resources.Accelerators = append(r.Resources.Accelerators, pingstatus.AcceleratorResponse{ResourceType: str.Draw(t, "type"), Available: str.Draw(t, "available")})
			}
		}
		switch rapid.IntRange(0, 2).Draw(t, "taints") {
		case 1:
			r.Taints = []pingstatus.TaintResponse{}
		case 2:
			var list []pingstatus.TaintResponse
			for range rapid.IntRange(1, 3).Draw(t, "n") {
				list = append(list, pingstatus.TaintResponse{Key: str.Draw(t, "key"), Value: str.Draw(t, "value"), Effect: str.Draw(t, "effect")})
			}
			r.Taints = append([]pingstatus.TaintResponse{}, list...)
		}
		switch rapid.IntRange(0, 2).Draw(t, "labels") {
		case 1:
			r.Labels = map[string]string{}
		case 2:
			r.Labels = rapid.MapOfN(str, str, 1, 3).Draw(t, "label entries")
		}
		switch rapid.IntRange(0, 2).Draw(t, "devices") {
		case 1:
			r.Devices = []pingstatus.DeviceResponse{}
		case 2:
			var list []pingstatus.DeviceResponse
			for range rapid.IntRange(1, 3).Draw(t, "n") {
				g := pingstatus.DeviceResponse{Name: str.Draw(t, "name"), Count: rapid.Int().Draw(t, "count")}
				if rapid.Bool().Draw(t, "attributes") {
					g.Attributes = map[string]pingstatus.DeviceAttribute{str.Draw(t, "attribute"): {
						IntValue: rapid.Ptr(rapid.Int64(), true).Draw(t, "int"), BoolValue: rapid.Ptr(rapid.Bool(), true).Draw(t, "bool"),
						StringValue: rapid.Ptr(str, true).Draw(t, "string"), VersionValue: rapid.Ptr(str, true).Draw(t, "version"),
					}}
				}
				if rapid.Bool().Draw(t, "capacity") {
					g.Capacity = map[string]pingstatus.DeviceCapacity{str.Draw(t, "capacity name"): {Value: str.Draw(t, "value")}}
				}
				for range rapid.IntRange(0, 2).Draw(t, "device taints") {
					g.Taints = append(g.Taints, pingstatus.TaintResponse{Key: str.Draw(t, "key"), Value: str.Draw(t, "value"), Effect: str.Draw(t, "effect")})
				}
				list = append(list, g)
			}
			r.Devices = append([]pingstatus.DeviceResponse{}, list...)
		}
		return r
	})
}

// TestPropertyWireRoundTrip: marshal then unmarshal gives the reply back, and an
// absent taints, labels or devices list never becomes [] nor the other way
// round.
func TestPropertyWireRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := wireReply().Draw(t, "reply")
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var got pingstatus.PingResponse
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round trip of %s (-want +got):\n%s", b, diff)
		}
		if (want.Taints == nil) != (got.Taints == nil) {
			t.Fatalf("absent and empty taints were confused: %s", b)
		}
		if (want.Labels == nil) != (got.Labels == nil) {
			t.Fatalf("absent and empty labels were confused: %s", b)
		}
		if (want.Devices == nil) != (got.Devices == nil) {
			t.Fatalf("absent and empty devices were confused: %s", b)
		}
	})
}

// TestPropertyValidReplyParsesToItsPatch: a reply built from valid parts parses,
// without a warning, to the patch those parts describe.
func TestPropertyValidReplyParsesToItsPatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var reply pingstatus.PingResponse
		want := pingstatus.NodePatch{Kind: pingstatus.Structured, Status: "ok"}
		reply.Status = "ok"
		// A reply that lists devices counts no accelerator (rule device-not-counted).
		listsDevices := false
		if rapid.Bool().Draw(t, "devices") {
			groups := gen.DeviceGroups(6).Draw(t, "devices")
			listsDevices = len(groups) > 0
			reply.Devices = append([]pingstatus.DeviceResponse{}, groups...)
			want.ReplaceDevices = true
			want.Devices = []pingstatus.DeviceGroup{}
			for _, g := range groups {
				group := pingstatus.DeviceGroup{Name: g.Name, Count: g.Count, Attributes: g.Attributes}
				for _, taint := range g.Taints {
					group.Taints = append(group.Taints, pingstatus.DeviceTaint{Key: taint.Key, Value: taint.Value, Effect: pingstatus.DeviceTaintEffect(taint.Effect)})
				}
				for name, c := range g.Capacity {
					if group.Capacity == nil {
						group.Capacity = map[string]resource.Quantity{}
					}
					group.Capacity[name] = resource.MustParse(c.Value)
				}
				want.Devices = append(want.Devices, group)
			}
			slices.SortFunc(want.Devices, func(a, b pingstatus.DeviceGroup) int { return strings.Compare(a.Name, b.Name) })
		}
		if rapid.Bool().Draw(t, "resources") {
			reply.Resources = &pingstatus.ResourcesResponse{}
			want.Resources = corev1.ResourceList{}
			if rapid.Bool().Draw(t, "cpu") {
				reply.Resources.CPU = gen.PositiveQuantity().Draw(t, "cpu")
				want.Resources[corev1.ResourceCPU] = resource.MustParse(reply.Resources.CPU)
			}
			if rapid.Bool().Draw(t, "memory") {
				reply.Resources.Memory = gen.PositiveQuantity().Draw(t, "memory")
				want.Resources[corev1.ResourceMemory] = resource.MustParse(reply.Resources.Memory)
			}
			if rapid.Bool().Draw(t, "pods") {
				reply.Resources.Pods = gen.WholeQuantity(1).Draw(t, "pods")
				want.Resources[corev1.ResourcePods] = resource.MustParse(reply.Resources.Pods)
			}
			names := rapid.SliceOfNDistinct(gen.ExtendedResourceName(), 0, 4, rapid.ID).Draw(t, "accelerators")
			for _, name := range names {
				n := gen.WholeQuantity(0).Draw(t, "available")
				if listsDevices {
					n = "0"
				}
				reply.Resources.Accelerators = append(reply.Resources.Accelerators, pingstatus.AcceleratorResponse{ResourceType: string(name), Available: n})
				want.Resources[name] = resource.MustParse(n)
			}
			if len(want.Resources) == 0 {
				want.Resources = nil
			}
		}
		if rapid.Bool().Draw(t, "taints") {
			want.ReplaceTaints = true
			want.Taints = gen.UniqueTaints(6).Draw(t, "taints")
			var list []pingstatus.TaintResponse
			for _, taint := range want.Taints {
				list = append(list, pingstatus.TaintResponse{Key: taint.Key, Value: taint.Value, Effect: string(taint.Effect)})
			}
			reply.Taints = append([]pingstatus.TaintResponse{}, list...)
		}
		opts := pingstatus.Options{LabelNamespaces: gen.LabelNamespaces}
		if rapid.Bool().Draw(t, "labels") {
			want.ReplaceLabels = true
			want.Labels = gen.Labels(6).Draw(t, "labels")
			reply.Labels = want.Labels
		}
		if w := reply.Validate(opts); w != nil {
			t.Fatalf("Validate of a valid reply: %v", w)
		}
		body, err := json.Marshal(reply)
		if err != nil {
			t.Fatal(err)
		}
		got, warnings := pingstatus.Parse(body, opts)
		if len(warnings) != 0 {
			t.Fatalf("warnings for %s: %v", body, warnings)
		}
		if diff := cmp.Diff(want, got, equateQuantities, ignoreJudgement); diff != "" {
			t.Fatalf("Parse(%s) (-want +got):\n%s", body, diff)
		}
	})
}

// TestPropertyParseYieldsOnlyValidEntries: whatever the body, every entry of the
// patch is valid by the rules, under the default and other options.
func TestPropertyParseYieldsOnlyValidEntries(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		body := gen.ReplyBody().Draw(t, "body")
		opts := pingstatus.Options{
			AllowZero:     rapid.Bool().Draw(t, "allowZero"),
			ProtectedKeys: rapid.SliceOfN(rapid.SampledFrom(gen.SharedKeys), 0, 1).Draw(t, "protected"),
			MaxTaints:     rapid.IntRange(0, 8).Draw(t, "maxTaints"),
			MaxLabels:     rapid.IntRange(0, 8).Draw(t, "maxLabels"),
			MaxDevices:    rapid.SampledFrom([]int{0, 1, 4, 16, 200000}).Draw(t, "maxDevices"),
		}
		if rapid.Bool().Draw(t, "label namespaces") {
			opts.LabelNamespaces = gen.LabelNamespaces
			opts.ProtectedLabels = rapid.SliceOfN(rapid.SampledFrom(gen.SharedLabelKeys), 0, 1).Draw(t, "protected labels")
		}
		patch, warnings := pingstatus.Parse(body, opts)
		if err := checkPatch(patch, opts); err != nil {
			t.Fatalf("Parse(%s) = %+v: %v", body, patch, err)
		}
		for _, w := range warnings {
			if w.Message == "" {
				t.Fatalf("a warning without a message at %q", w.Path)
			}
		}
	})
}

// checkPatch returns an error if any entry of p breaks a rule of the package.
func checkPatch(p pingstatus.NodePatch, opts pingstatus.Options) error {
	if p.Kind != pingstatus.Structured && !p.IsEmpty() {
		return fmt.Errorf("a %v reply carries a change", p.Kind)
	}
	hugepages := regexp.MustCompile(`^hugepages-(1|2|4|8|16|32|64|128|256|512)(Ki|Mi|Gi)$`)
	for name, q := range p.Resources {
		standard := name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourcePods || name == corev1.ResourceEphemeralStorage
		if !standard && !kuberules.IsExtendedResourceName(name) && !hugepages.MatchString(string(name)) {
			return fmt.Errorf("resource %q is neither standard, extended nor huge pages", name)
		}
		if problem := kuberules.QuantityProblem(name, q); problem != "" {
			return fmt.Errorf("%s = %s: %s", name, q.String(), problem)
		}
		if standard && q.IsZero() && !opts.AllowZero {
			return fmt.Errorf("%s is zero", name)
		}
		limit := resource.MustParse("9223372036854775")
		if name == corev1.ResourceMemory {
			limit = resource.MustParse("9223372036854775806")
		}
		if q.Cmp(limit) > 0 {
			return fmt.Errorf("%s = %s is too large", name, q.String())
		}
	}
	if err := checkFull(p, opts); err != nil {
		return err
	}
	if !p.ReplaceTaints && p.Taints != nil {
		return fmt.Errorf("taints %v without ReplaceTaints", p.Taints)
	}
	if limit := opts.MaxTaints; limit > 0 && len(p.Taints) > limit {
		return fmt.Errorf("%d taints, over the limit of %d", len(p.Taints), limit)
	}
	seen := map[kuberules.TaintID]bool{}
	for _, taint := range p.Taints {
		id := kuberules.IDOf(&taint)
		switch {
		case seen[id]:
			return fmt.Errorf("taint %s repeated", id)
		case kuberules.TaintKeyProblem(taint.Key) != "", kuberules.TaintValueProblem(taint.Value) != "", !kuberules.IsValidEffect(taint.Effect):
			return fmt.Errorf("invalid taint %+v", taint)
		case kuberules.IsReservedKey(taint.Key), kuberules.IsProtectedKey(taint.Key, opts.ProtectedKeys):
			return fmt.Errorf("taint %s has a key the plugin may not set", id)
		}
		seen[id] = true
	}
	if err := checkLabels(p, opts); err != nil {
		return err
	}
	return checkDevices(p, opts)
}

// checkFull returns an error if the Full of p, or of one of its parts,
// breaks rule resource-full as the package comment says it: cpu and
// memory only, cpu first, each once, none with a figure, none beside a
// basis of "total" nor with AllowZero.
func checkFull(p pingstatus.NodePatch, opts pingstatus.Options) error {
	for _, part := range p.Parts {
		if err := checkFull(part.Patch, opts); err != nil {
			return fmt.Errorf("part %s: %w", part.Name, err)
		}
	}
	if len(p.Full) == 0 {
		return nil
	}
	switch {
	case opts.AllowZero:
		return fmt.Errorf("full %v with AllowZero", p.Full)
	case p.Basis == pingstatus.BasisTotal:
		return fmt.Errorf("full %v with the basis %q", p.Full, p.Basis)
	case !slices.Equal(p.Full, []corev1.ResourceName{corev1.ResourceCPU}) && !slices.Equal(p.Full, []corev1.ResourceName{corev1.ResourceMemory}) &&
		!slices.Equal(p.Full, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}):
		return fmt.Errorf("full %v is not cpu, memory, or cpu then memory", p.Full)
	}
	for _, name := range p.Full {
		if q, ok := p.Resources[name]; ok {
			return fmt.Errorf("%s is full, and has the figure %s", name, q.String())
		}
	}
	return nil
}

// checkLabels returns an error if a label of p breaks a rule of the
// package, each rule written here as the package comment says it.
func checkLabels(p pingstatus.NodePatch, opts pingstatus.Options) error {
	if !p.ReplaceLabels && p.Labels != nil {
		return fmt.Errorf("labels %v without ReplaceLabels", p.Labels)
	}
	if limit := opts.MaxLabels; limit > 0 && len(p.Labels) > limit {
		return fmt.Errorf("%d labels, over the limit of %d", len(p.Labels), limit)
	}
	within := func(prefix, ns string) bool { return prefix == ns || strings.HasSuffix(prefix, "."+ns) }
	for key, value := range p.Labels {
		prefix, _, prefixed := strings.Cut(key, "/")
		nfd := within(prefix, "feature.node.kubernetes.io") || within(prefix, "profile.node.kubernetes.io")
		allowed := nfd
		for _, ns := range opts.LabelNamespaces {
			allowed = allowed || within(prefix, ns)
		}
		switch {
		case kuberules.QualifiedNameProblem(key) != "", kuberules.TaintValueProblem(value) != "":
			return fmt.Errorf("invalid label %s=%s", key, value)
		case !prefixed:
			return fmt.Errorf("label %s has no prefix", key)
		case !nfd && (within(prefix, "kubernetes.io") || within(prefix, "k8s.io")):
			return fmt.Errorf("label %s is Kubernetes'", key)
		case !allowed:
			return fmt.Errorf("label %s is in a namespace the options do not allow", key)
		case slices.Contains(opts.ProtectedLabels, key):
			return fmt.Errorf("label %s is the provider's", key)
		}
	}
	return nil
}

// checkDevices returns an error if a device group of p breaks a rule of
// the package, each rule written here as the package comment says it.
func checkDevices(p pingstatus.NodePatch, opts pingstatus.Options) error {
	if !p.ReplaceDevices && (p.Devices != nil || p.KeptDeviceGroups != nil) {
		return fmt.Errorf("devices %v and kept groups %v without ReplaceDevices", p.Devices, p.KeptDeviceGroups)
	}
	limit := opts.MaxDevices
	switch {
	case limit <= 0:
		limit = pingstatus.DefaultMaxDevices
	case limit > 100000:
		limit = 100000
	}
	if !slices.IsSorted(p.KeptDeviceGroups) || len(slices.Compact(slices.Clone(p.KeptDeviceGroups))) != len(p.KeptDeviceGroups) {
		return fmt.Errorf("kept groups %v not sorted and unique", p.KeptDeviceGroups)
	}
	total := 0
	for i, g := range p.Devices {
		switch {
		case i > 0 && p.Devices[i-1].Name >= g.Name:
			return fmt.Errorf("groups %s and %s not sorted and unique", p.Devices[i-1].Name, g.Name)
		case kuberules.DeviceGroupNameProblem(g.Name) != "":
			return fmt.Errorf("group name %q is invalid", g.Name)
		case slices.Contains(p.KeptDeviceGroups, g.Name):
			return fmt.Errorf("group %s both published and kept", g.Name)
		case g.Count < 0 || g.Count > limit:
			return fmt.Errorf("group %s has %d devices", g.Name, g.Count)
		case len(g.Attributes)+len(g.Capacity) > kuberules.MaxDeviceAttributesAndCapacities:
			return fmt.Errorf("group %s has %d attributes and capacities", g.Name, len(g.Attributes)+len(g.Capacity))
		}
		total += g.Count
		for name, a := range g.Attributes {
			values := 0
			for _, set := range []bool{a.IntValue != nil, a.BoolValue != nil, a.StringValue != nil, a.VersionValue != nil} {
				if set {
					values++
				}
			}
			switch {
			case kuberules.DeviceAttributeNameProblem(name) != "":
				return fmt.Errorf("group %s: attribute name %q is invalid", g.Name, name)
			case values != 1:
				return fmt.Errorf("group %s: attribute %s has %d values", g.Name, name, values)
			case a.StringValue != nil && kuberules.DeviceStringProblem(*a.StringValue) != "",
				a.VersionValue != nil && kuberules.DeviceVersionProblem(*a.VersionValue) != "":
				return fmt.Errorf("group %s: attribute %s has an invalid value", g.Name, name)
			}
		}
		for name, q := range g.Capacity {
			if kuberules.DeviceAttributeNameProblem(name) != "" || q.Sign() < 0 || q.Cmp(resource.MustParse("8Ei")) >= 0 {
				return fmt.Errorf("group %s: capacity %s = %s is invalid", g.Name, name, q.String())
			}
		}
		if len(g.Taints) > kuberules.MaxDeviceTaints {
			return fmt.Errorf("group %s has %d taints", g.Name, len(g.Taints))
		}
		for _, taint := range g.Taints {
			switch {
			case kuberules.QualifiedNameProblem(taint.Key) != "", kuberules.TaintValueProblem(taint.Value) != "":
				return fmt.Errorf("group %s: invalid taint %+v", g.Name, taint)
			case taint.Effect != pingstatus.DeviceTaintNone && taint.Effect != pingstatus.DeviceTaintNoSchedule && taint.Effect != pingstatus.DeviceTaintNoExecute:
				return fmt.Errorf("group %s: taint %s has the effect %q", g.Name, taint.Key, taint.Effect)
			}
		}
	}
	if total > limit {
		return fmt.Errorf("%d devices in all, over the limit of %d", total, limit)
	}
	for _, name := range p.KeptDeviceGroups {
		if kuberules.DeviceGroupNameProblem(name) != "" {
			return fmt.Errorf("kept group name %q is invalid", name)
		}
	}
	return nil
}

// TestPropertyFieldByFieldAgrees: each field is read on its own, so a
// field of the wrong JSON type changes nothing else of the reply (once,
// a json.Unmarshal read clean replies, and a field-by-field decode those
// with such a field; the rules now read every reply from its tree). A
// status of the wrong type put first is that field; the reply's own
// status, if any, comes later and counts.
func TestPropertyFieldByFieldAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		body := gen.ReplyBody().Draw(t, "body")
		opts := pingstatus.Options{MaxDevices: rapid.SampledFrom([]int{0, 4}).Draw(t, "maxDevices")}
		patch, warnings := pingstatus.Parse(body, opts)
		if patch.Kind != pingstatus.Structured {
			return
		}
		forced := append([]byte(`{"status":[],`), bytes.TrimPrefix(bytes.TrimSpace(body), []byte("{"))...)
		if bytes.Equal(bytes.TrimSpace(body), []byte("{}")) {
			forced = []byte(`{"status":[]}`)
		}
		slow, slowWarnings := pingstatus.Parse(forced, opts)
		if diff := cmp.Diff(patch, slow, equateQuantities, ignoreJudgement); diff != "" {
			t.Fatalf("Parse(%s) and, field by field, Parse(%s) (-fast +slow):\n%s", body, forced, diff)
		}
		texts := func(warnings []pingstatus.Warning) []string {
			var out []string
			for _, w := range warnings {
				if w.Path != "status" {
					out = append(out, w.String())
				}
			}
			slices.Sort(out)
			return out
		}
		if diff := cmp.Diff(texts(warnings), texts(slowWarnings)); diff != "" {
			t.Fatalf("warnings of Parse(%s) and, field by field, of Parse(%s) (-fast +slow):\n%s", body, forced, diff)
		}
	})
}
