package pingstatus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
)

// Parse turns a reply body into a [NodePatch] and the warnings for
// everything it refused. It never fails: a legacy body gives an empty patch
// and no warning, a body that cannot be used gives an empty patch and a
// warning, and in a JSON object each field is judged on its own, so one bad
// field never discards the good ones.
func Parse(body []byte, opts Options) (NodePatch, []Warning) {
	p := parser{opts: opts}
	patch := p.parse(body)
	return patch, p.warnings
}

type parser struct {
	opts     Options
	warnings []Warning
	// keptOnBadValue are keys of taint entries that the field-by-field
	// decode dropped because their value was not a string.
	keptOnBadValue []string
}

func (p *parser) warn(path, format string, args ...any) {
	p.warnings = append(p.warnings, Warning{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) parse(body []byte) NodePatch {
	if limit := p.opts.maxBodyBytes(); len(body) > limit {
		p.warn("", "reply is %d bytes, more than the limit of %d; ignored", len(body), limit)
		return NodePatch{Kind: Unusable}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return NodePatch{Kind: Legacy}
	}
	r, ok := p.decode(body)
	if !ok {
		return NodePatch{Kind: Unusable}
	}
	patch := NodePatch{Kind: Structured, Status: r.Status}
	if r.Resources != nil {
		patch.Resources = p.resources(r.Resources)
	}
	if r.Taints != nil {
		patch.ReplaceTaints, patch.Taints, patch.KeptTaintKeys = p.taints(*r.Taints)
	}
	return patch
}

// reply mirrors PingResponse for decoding: quantities may be JSON strings or
// numbers, and taints keep "absent" apart from "[]".
type reply struct {
	Status    string     `json:"status"`
	Resources *resources `json:"resources"`
	Taints    *[]taint   `json:"taints"`
}

type resources struct {
	CPU          quantity      `json:"cpu"`
	Memory       quantity      `json:"memory"`
	Pods         quantity      `json:"pods"`
	Accelerators []accelerator `json:"accelerators"`
}

type accelerator struct {
	ResourceType string   `json:"resourceType"`
	Available    quantity `json:"available"`
	dropped      bool     // by the field-by-field decode, which warned
}

type taint struct {
	Key     string `json:"key"`
	Value   string `json:"value"`
	Effect  string `json:"effect"`
	dropped bool   // by the field-by-field decode, which warned
}

// quantity is the text of a JSON string or number; null and absent leave it
// unset.
type quantity struct {
	text string
	set  bool
}

func (q *quantity) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*q = quantity{}
		return nil
	case b[0] == '"' && bytes.IndexByte(b, '\\') < 0:
		*q = quantity{text: string(b[1 : len(b)-1]), set: true} // nothing to unescape
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*q = quantity{text: s, set: true}
		return nil
	case b[0] == '-' || '0' <= b[0] && b[0] <= '9':
		*q = quantity{text: string(b), set: true}
		return nil
	}
	return errNotQuantity
}

var errNotQuantity = errors.New("a quantity must be a JSON string or number")

// decode reads the whole body into a reply. The fast path is one
// json.Unmarshal; if a field has the wrong JSON type, it decodes again
// field by field, so that every bad field gets its own warning and the good
// ones are kept.
func (p *parser) decode(body []byte) (reply, bool) {
	var r reply
	err := json.Unmarshal(body, &r)
	if err == nil {
		return r, true
	}
	if _, syntax := errors.AsType[*json.SyntaxError](err); syntax || !json.Valid(body) {
		p.warn("", "reply looks like a JSON object but does not parse (%v); ignored", err)
		return reply{}, false
	}
	return p.decodeByField(body), true
}

// raw* mirror reply with every field left undecoded.
type rawReply struct {
	Status    json.RawMessage `json:"status"`
	Resources json.RawMessage `json:"resources"`
	Taints    json.RawMessage `json:"taints"`
}

type rawResources struct {
	CPU          json.RawMessage `json:"cpu"`
	Memory       json.RawMessage `json:"memory"`
	Pods         json.RawMessage `json:"pods"`
	Accelerators json.RawMessage `json:"accelerators"`
}

type rawAccelerator struct {
	ResourceType json.RawMessage `json:"resourceType"`
	Available    json.RawMessage `json:"available"`
}

type rawTaint struct {
	Key    json.RawMessage `json:"key"`
	Value  json.RawMessage `json:"value"`
	Effect json.RawMessage `json:"effect"`
}

func (p *parser) decodeByField(body []byte) reply {
	var raw rawReply
	var r reply
	_ = json.Unmarshal(body, &raw) // body is a valid JSON object: cannot fail
	p.field(raw.Status, "status", &r.Status, "a string", "ignored")
	if isPresent(raw.Resources) {
		var rr rawResources
		if p.field(raw.Resources, "resources", &rr, "an object", "resources left unchanged") {
			r.Resources = &resources{}
			p.field(rr.CPU, "resources.cpu", &r.Resources.CPU, "a string or a number", "cpu left unchanged")
			p.field(rr.Memory, "resources.memory", &r.Resources.Memory, "a string or a number", "memory left unchanged")
			p.field(rr.Pods, "resources.pods", &r.Resources.Pods, "a string or a number", "pods left unchanged")
			r.Resources.Accelerators = p.accelerators(rr.Accelerators)
		}
	}
	if isPresent(raw.Taints) {
		var items []json.RawMessage
		if p.field(raw.Taints, "taints", &items, "an array", "taints left unchanged") {
			taints := make([]taint, len(items))
			for i, item := range items {
				taints[i] = p.taint(item, indexPath("taints", i))
			}
			r.Taints = &taints
		}
	}
	return r
}

func (p *parser) accelerators(raw json.RawMessage) []accelerator {
	var items []json.RawMessage
	if !isPresent(raw) || !p.field(raw, "resources.accelerators", &items, "an array", "accelerators left unchanged") {
		return nil
	}
	out := make([]accelerator, len(items))
	for i, item := range items {
		path := indexPath("resources.accelerators", i)
		var ra rawAccelerator
		a := &out[i]
		a.dropped = !p.field(item, path, &ra, "an object", "entry dropped") ||
			!p.field(ra.ResourceType, path+".resourceType", &a.ResourceType, "a string", "entry dropped") ||
			!p.field(ra.Available, path+".available", &a.Available, "a string or a number", "entry dropped")
	}
	return out
}

// taint decodes one entry. An entry that is not an object, or whose key is
// not a string, is dropped; one whose value is not a string is dropped and
// its key's current taints kept; an effect that is not a string becomes
// NoSchedule.
func (p *parser) taint(raw json.RawMessage, path string) taint {
	var rt rawTaint
	var t taint
	if !p.field(raw, path, &rt, "an object", "entry dropped") ||
		!p.field(rt.Key, path+".key", &t.Key, "a string", "entry dropped") {
		t.dropped = true
		return t
	}
	if !p.field(rt.Value, path+".value", &t.Value, "a string", "entry dropped, the plugin's current "+t.Key+" taints kept") {
		p.keptOnBadValue = append(p.keptOnBadValue, t.Key)
		t.dropped = true
		return t
	}
	if !p.field(rt.Effect, path+".effect", &t.Effect, "a string", "NoSchedule used") {
		t.Effect = string(corev1.TaintEffectNoSchedule)
	}
	return t
}

// field decodes raw into dst. A missing or null raw leaves dst alone and
// succeeds; a value of the wrong JSON type is warned about at path, saying
// what was done (done).
func (p *parser) field(raw json.RawMessage, path string, dst any, want, done string) bool {
	if !isPresent(raw) {
		return true
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		p.warn(path, "must be %s, got %s; %s", want, describe(raw), done)
		return false
	}
	return true
}

// indexPath returns list[i] without fmt.
func indexPath(list string, i int) string {
	return list + "[" + strconv.Itoa(i) + "]"
}

func isPresent(raw json.RawMessage) bool { return len(raw) != 0 && string(raw) != "null" }

// describe names a JSON value's type for a warning, with the value itself
// when it is short.
func describe(raw json.RawMessage) string {
	kind := "a number"
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		kind = "a string"
	case 't', 'f':
		kind = "a boolean"
	}
	if len(raw) > 40 {
		return kind
	}
	return kind + " " + string(raw)
}

// resources judges cpu, memory, pods and accelerators.
func (p *parser) resources(r *resources) corev1.ResourceList {
	list := make(corev1.ResourceList, 3+len(r.Accelerators))
	p.standard(list, corev1.ResourceCPU, r.CPU)
	p.standard(list, corev1.ResourceMemory, r.Memory)
	p.standard(list, corev1.ResourcePods, r.Pods)
	p.acceleratorList(list, r.Accelerators)
	if len(list) == 0 {
		return nil
	}
	return list
}

func (p *parser) standard(list corev1.ResourceList, name corev1.ResourceName, q quantity) {
	if !q.set {
		return
	}
	path := "resources." + string(name)
	v, ok := p.quantity(path, name, q)
	if !ok {
		return
	}
	if v.IsZero() && !p.opts.AllowZero {
		p.warn(path, "zero %s refused (it would drain the node; a plugin that wants no pods sets a taint); %s left unchanged", name, name)
		return
	}
	list[name] = v
}

// quantity parses q and judges it for name. On refusal it warns and the
// resource is left unchanged.
func (p *parser) quantity(path string, name corev1.ResourceName, q quantity) (resource.Quantity, bool) {
	v, err := resource.ParseQuantity(q.text)
	if err != nil {
		p.warn(path, "%s is not a quantity (%v); %s left unchanged", strconv.Quote(q.text), err, name)
		return v, false
	}
	if problem := kuberules.QuantityProblem(name, v); problem != "" {
		p.warn(path, "%s %s; %s left unchanged", q.text, problem, name)
		return v, false
	}
	if tooLarge(name, v) {
		p.warn(path, "%s is too large: %s; %s left unchanged", q.text, limitText(name), name)
		return v, false
	}
	return v, true
}

// tooLarge reports whether v is more than a scheduler can count for name in
// an int64: thousandths for cpu and whole-number resources (whose
// validation counts in thousandths too), bytes otherwise. A byte count of
// 2^63-1 is refused as well, since the quantity parser silently caps larger
// binary values ("100Ei") at it.
func tooLarge(name corev1.ResourceName, v resource.Quantity) bool {
	thousandths := countsInThousandths(name)
	if n, ok := v.AsInt64(); ok { // the common case, without allocating
		return thousandths && n > math.MaxInt64/1000 || n == math.MaxInt64
	}
	if thousandths {
		return v.Cmp(*resource.NewQuantity(math.MaxInt64/1000, resource.DecimalSI)) > 0
	}
	return v.Cmp(*resource.NewQuantity(math.MaxInt64, resource.BinarySI)) >= 0
}

func countsInThousandths(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || kuberules.IsIntegerResource(name)
}

func limitText(name corev1.ResourceName) string {
	if countsInThousandths(name) {
		return "the most is 9223372036854775"
	}
	return "it must be less than 8Ei"
}

func (p *parser) acceleratorList(list corev1.ResourceList, accs []accelerator) {
	if limit := p.opts.maxAccelerators(); len(accs) > limit {
		p.warn("resources.accelerators", "%d entries, more than the limit of %d; accelerators left unchanged", len(accs), limit)
		return
	}
	first := make(map[corev1.ResourceName]int, len(accs))
	for i, a := range accs {
		if a.dropped {
			continue
		}
		path := indexPath("resources.accelerators", i)
		name := corev1.ResourceName(a.ResourceType)
		if problem := kuberules.ExtendedResourceNameProblem(name); problem != "" {
			p.warn(path+".resourceType", "%s is not an extended resource name: %s; entry dropped", strconv.Quote(a.ResourceType), problem)
			continue
		}
		if !a.Available.set {
			p.warn(path+".available", "missing; entry dropped")
			continue
		}
		v, ok := p.quantity(path+".available", name, a.Available)
		if !ok {
			continue
		}
		j, seen := first[name]
		if !seen {
			first[name] = i
			list[name] = v
			continue
		}
		sum := list[name].DeepCopy()
		sum.Add(v)
		if tooLarge(name, sum) {
			p.warn(path, "%s repeats resources.accelerators[%d] and the sum is too large: %s; entry dropped", name, j, limitText(name))
			continue
		}
		p.warn(path, "%s repeats resources.accelerators[%d]; the two are summed", name, j)
		list[name] = sum
	}
}

// taints judges the plugin's taint list. Over the limit, the whole field is
// no news. Otherwise the result is the plugin's whole list (possibly empty)
// and the keys of entries refused for their value.
func (p *parser) taints(in []taint) (replace bool, out []corev1.Taint, kept []string) {
	if limit := p.opts.maxTaints(); len(in) > limit {
		p.warn("taints", "%d entries, more than the limit of %d; taints left unchanged", len(in), limit)
		return false, nil, nil
	}
	kept = p.keptOnBadValue
	out = make([]corev1.Taint, 0, len(in))
	type place struct{ out, in int } // where a pair stands in out, and in the reply
	seen := make(map[kuberules.TaintID]place, len(in))
	for i, t := range in {
		if t.dropped {
			continue
		}
		path := indexPath("taints", i)
		if problem := kuberules.TaintKeyProblem(t.Key); problem != "" {
			p.warn(path+".key", "%s is not a valid taint key: %s; entry dropped", strconv.Quote(t.Key), problem)
			continue
		}
		if kuberules.IsReservedKey(t.Key) {
			p.warn(path+".key", "%s belongs to Kubernetes controllers; entry dropped", t.Key)
			continue
		}
		if kuberules.IsProtectedKey(t.Key, p.opts.ProtectedKeys) {
			p.warn(path+".key", "%s belongs to the provider; entry dropped", t.Key)
			continue
		}
		if problem := kuberules.TaintValueProblem(t.Value); problem != "" {
			p.warn(path+".value", "%s is not a valid taint value: %s; entry dropped, the plugin's current %s taints kept", strconv.Quote(t.Value), problem, t.Key)
			kept = append(kept, t.Key)
			continue
		}
		effect := corev1.TaintEffect(t.Effect)
		if !kuberules.IsValidEffect(effect) {
			if t.Effect == "" {
				p.warn(path+".effect", "missing; NoSchedule used")
			} else {
				p.warn(path+".effect", "%s is not NoSchedule, PreferNoSchedule or NoExecute; NoSchedule used", strconv.Quote(t.Effect))
			}
			effect = corev1.TaintEffectNoSchedule
		}
		taint := corev1.Taint{Key: t.Key, Value: t.Value, Effect: effect}
		id := kuberules.IDOf(&taint)
		if at, dup := seen[id]; dup {
			p.warn(path, "repeats %s of taints[%d]; the last one is kept", id, at.in)
			out[at.out] = taint
			seen[id] = place{at.out, i}
			continue
		}
		seen[id] = place{len(out), i}
		out = append(out, taint)
	}
	return true, out, kept
}
