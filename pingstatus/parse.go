package pingstatus

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// Bounds on the work and the warnings that one reply may cause. The
// package comment gives the reasons for each number.
const (
	// maxQuantityBytes is the longest quantity text that goes to the
	// quantity parser, whose work grows faster than the text.
	maxQuantityBytes = 64
	// maxExponent bounds the decimal exponent ("1e100") of a quantity
	// that goes to the quantity parser; beyond it the value is judged
	// without big arithmetic.
	maxExponent = 100
	// maxNameBytes is the longest qualified name (a 253-byte DNS
	// subdomain, '/', a 63-byte name): a longer taint key or resource
	// type is refused before the name rules see it.
	maxNameBytes = 253 + 1 + 63
	// maxValueBytes is the longest label value, and so taint value.
	maxValueBytes = 63
	// quoteBytes is how much of a plugin's text a warning quotes.
	quoteBytes = 64
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
	// nonFinite maps the path of a field that held NaN, Infinity or the
	// like to that token; the body the decoder reads has false there.
	nonFinite map[string]string
}

func (p *parser) warn(path, format string, args ...any) {
	p.warnings = append(p.warnings, Warning{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) parse(body []byte) NodePatch {
	if limit := p.opts.maxBodyBytes(); len(body) > limit {
		p.warn("", "reply is %d bytes, more than the limit of %d; ignored", len(body), limit)
		return NodePatch{Kind: Unusable}
	}
	var encoding string
	if len(body) >= 2 && maybeNotUTF8(body[0]) {
		body, encoding = utf8Text(body)
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return NodePatch{Kind: Legacy}
	}
	if encoding != "" {
		p.warn("", "reply is %s text, not UTF-8 as JSON must be; decoded and read", encoding)
	}
	r, ok := p.decode(body)
	if !ok {
		return NodePatch{Kind: Unusable}
	}
	patch := NodePatch{Kind: Structured, Status: r.Status}
	if r.Resources != nil {
		patch.Resources = p.resources(r.Resources)
		patch.Basis = p.basis(r.Resources.Basis)
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
	Basis        *string       `json:"basis"`
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

// decode reads the whole body into a reply. The fast path is one light
// walk that looks for repeated keys and lists over their limit, and one
// json.Unmarshal. If a field has the wrong JSON type, a key is repeated or
// a list is over its limit, it decodes field by field instead, so that
// every bad field gets its own warning, the good ones are kept, of a
// repeated key the last value counts, and a list over its limit is counted,
// never decoded. A body that is JSON but for NaN, Infinity and their kin is
// read with false in their place, a value of the wrong type for every
// field.
func (p *parser) decode(body []byte) (reply, bool) {
	w := walk(body, p.opts)
	var r reply
	raw, err := unmarshal(body, &r, w.overLimit)
	decodable := body
	if notJSON(err, body) {
		fixed, n := withoutNonFinite(body)
		if n == 0 {
			p.warn("", "reply looks like a JSON object but does not parse (%v); ignored", err)
			return reply{}, false
		}
		r = reply{}
		if raw, err = unmarshal(fixed, &r, w.overLimit); notJSON(err, fixed) {
			p.warn("", "reply looks like a JSON object but does not parse (%v); ignored", err)
			return reply{}, false
		}
		decodable = fixed
	}
	repeated := false
	for _, f := range w.findings {
		if f.token != "" {
			if p.nonFinite == nil {
				p.nonFinite = make(map[string]string)
			}
			p.nonFinite[f.at.String()] = f.token
			continue
		}
		repeated = true
		p.warn(f.at.String(), "given %d times; the last one is used", f.count)
	}
	switch {
	case raw != nil:
		return p.decodeByField(raw), true
	case err == nil && !repeated:
		return r, true
	}
	raw = new(rawReply)
	_ = json.Unmarshal(decodable, raw) // decodable is a valid JSON object: cannot fail
	return p.decodeByField(raw), true
}

// unmarshal decodes body into r; or, when a list is over its limit, into
// the raw reply it returns, whose fields the field-by-field decode reads
// (it counts that list but does not decode it).
func unmarshal(body []byte, r *reply, overLimit bool) (*rawReply, error) {
	if overLimit {
		raw := new(rawReply)
		return raw, json.Unmarshal(body, raw)
	}
	return nil, json.Unmarshal(body, r)
}

// notJSON reports whether err, from json.Unmarshal of body, says that body
// is not JSON at all (rather than JSON with a value of the wrong type).
func notJSON(err error, body []byte) bool {
	if err == nil {
		return false
	}
	_, syntax := errors.AsType[*json.SyntaxError](err)
	return syntax || !json.Valid(body)
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
	Basis        json.RawMessage `json:"basis"`
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

func (p *parser) decodeByField(raw *rawReply) reply {
	var r reply
	p.field(raw.Status, "status", &r.Status, "a string", "ignored")
	if isPresent(raw.Resources) {
		var rr rawResources
		if p.field(raw.Resources, "resources", &rr, "an object", "resources left unchanged") {
			r.Resources = &resources{}
			p.field(rr.CPU, "resources.cpu", &r.Resources.CPU, "a string or a number", "cpu left unchanged")
			p.field(rr.Memory, "resources.memory", &r.Resources.Memory, "a string or a number", "memory left unchanged")
			p.field(rr.Pods, "resources.pods", &r.Resources.Pods, "a string or a number", "pods left unchanged")
			r.Resources.Accelerators = p.accelerators(rr.Accelerators)
			if isPresent(rr.Basis) {
				var basis string
				if p.field(rr.Basis, "resources.basis", &basis, "a string", "read as \"total\": nothing is added to the figures") {
					r.Resources.Basis = &basis
				} else {
					basis = unknownBasis
					r.Resources.Basis = &basis
				}
			}
		}
	}
	if isPresent(raw.Taints) && p.withinLimit("taints", "taints", entryCount(raw.Taints), p.opts.maxTaints()) {
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

// withinLimit reports whether the list of n entries at path, of what,
// is within limit, and warns that the list is ignored when it is not.
func (p *parser) withinLimit(path, what string, n, limit int) bool {
	if n <= limit {
		return true
	}
	p.warn(path, "%d entries, more than the limit of %d; %s left unchanged", n, limit, what)
	return false
}

func (p *parser) accelerators(raw json.RawMessage) []accelerator {
	var items []json.RawMessage
	if !isPresent(raw) || !p.withinLimit("resources.accelerators", "accelerators", entryCount(raw), p.opts.maxAccelerators()) ||
		!p.field(raw, "resources.accelerators", &items, "an array", "accelerators left unchanged") {
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

// entryCount returns the number of entries of raw, a JSON value, if it is
// a list, or 0; it decodes nothing, so that a list over its limit costs no
// more than reading it.
func entryCount(raw json.RawMessage) int {
	if len(raw) == 0 || raw[0] != '[' {
		return 0
	}
	w := walker{b: raw, i: 1}
	n := 0
	for ; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] == ']' {
			return n
		}
		w.skip()
		n++
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			return n
		}
	}
}

// taint decodes one entry. An entry that is not an object, or whose key is
// not a string, is dropped; one whose value is not a string is dropped and
// its key's current taints kept (if the key is valid: no taint has an
// invalid one); an effect that is not a string becomes NoSchedule.
func (p *parser) taint(raw json.RawMessage, path string) taint {
	var rt rawTaint
	var t taint
	if !p.field(raw, path, &rt, "an object", "entry dropped") ||
		!p.field(rt.Key, path+".key", &t.Key, "a string", "entry dropped") {
		t.dropped = true
		return t
	}
	if isPresent(rt.Value) && json.Unmarshal(rt.Value, &t.Value) != nil {
		done := "entry dropped"
		if taintKeyProblem(t.Key) == "" {
			done += ", the plugin's current " + t.Key + " taints kept"
			p.keptOnBadValue = append(p.keptOnBadValue, t.Key)
		}
		p.warn(path+".value", "must be a string, got %s; %s", p.describe(path+".value", rt.Value), done)
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
		p.warn(path, "must be %s, got %s; %s", want, p.describe(path, raw), done)
		return false
	}
	return true
}

// indexPath returns list[i] without fmt.
func indexPath(list string, i int) string {
	return list + "[" + strconv.Itoa(i) + "]"
}

func isPresent(raw json.RawMessage) bool { return len(raw) != 0 && string(raw) != "null" }

// describe names the JSON value at path for a warning: its type, with the
// value itself (quoted, if a string) when it is short, or the non-finite
// number that stood there.
func (p *parser) describe(path string, raw json.RawMessage) string {
	if token, ok := p.nonFinite[path]; ok && string(raw) == "false" {
		return token + ", a number JSON does not have"
	}
	kind := "a number"
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		if len(raw) > 40 {
			return "a string"
		}
		var s string
		_ = json.Unmarshal(raw, &s) // raw is a JSON string
		return "a string " + text.Quote(s, quoteBytes)
	case 't', 'f':
		kind = "a boolean"
	}
	if len(raw) > 40 {
		return kind
	}
	return kind + " " + string(raw)
}

// resources judges cpu, memory, pods and accelerators.
// unknownBasis stands for a basis of the wrong JSON type, already warned
// about.
const unknownBasis = "\x00"

// basis judges resources.basis: "available" or "total"; anything else is
// read as "total", so that nothing is added to figures whose meaning is
// unknown.
func (p *parser) basis(b *string) Basis {
	switch {
	case b == nil:
		return ""
	case *b == string(BasisAvailable), *b == string(BasisTotal):
		return Basis(*b)
	case *b != unknownBasis:
		p.warn("resources.basis", "%s is not \"available\" or \"total\"; read as \"total\": nothing is added to the figures", text.Quote(*b, quoteBytes))
	}
	return BasisTotal
}

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
// resource is left unchanged. Text longer than maxQuantityBytes, and a
// decimal exponent beyond maxExponent, never reach the quantity parser,
// whose work (and that of comparing its result) grows with both.
func (p *parser) quantity(path string, name corev1.ResourceName, q quantity) (resource.Quantity, bool) {
	s := q.text
	if len(s) > maxQuantityBytes {
		p.warn(path, "%s is too long for a quantity: %d bytes, the most is %d; %s left unchanged", text.Quote(s, quoteBytes), len(s), maxQuantityBytes, name)
		return resource.Quantity{}, false
	}
	if zero, exp, ok := decimalExponent(s); ok && (exp > maxExponent || exp < -maxExponent) {
		// With at most 64 characters the mantissa is below 10^64 and,
		// unless zero, at least 10^-63: the exponent decides.
		switch {
		case zero:
			s = "0e0"
		case s[0] == '-':
			s = "-1" // negative, which is what is refused
		case exp > 0:
			p.warn(path, "%s is too large: %s; %s left unchanged", q.text, kuberules.LimitText(name), name)
			return resource.Quantity{}, false
		default:
			s = "1e-10" // the quantity parser rounds it up to 1n, as it would the value
		}
	}
	v, err := resource.ParseQuantity(s)
	if err != nil {
		p.warn(path, "%s is not a quantity (%v); %s left unchanged", text.Quote(q.text, quoteBytes), err, name)
		return v, false
	}
	if problem := kuberules.QuantityProblem(name, v); problem != "" {
		p.warn(path, "%s %s; %s left unchanged", q.text, problem, name)
		return v, false
	}
	if kuberules.TooLarge(name, v) {
		p.warn(path, "%s is too large: %s; %s left unchanged", q.text, kuberules.LimitText(name), name)
		return v, false
	}
	return v, true
}

// decimalExponent reads s as a quantity with a decimal exponent, like
// "1.5e3" or "-2E-7": whether its mantissa is zero, and its exponent. ok is
// false for any other form, and for an exponent that does not fit in an
// int64 (which the quantity parser refuses itself).
func decimalExponent(s string) (zero bool, exp int64, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits, dot := 0, false
	zero = true
mantissa:
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digits++
			zero = zero && c == '0'
		case c == '.' && !dot:
			dot = true
		default:
			break mantissa
		}
	}
	if digits == 0 || i == len(s) || s[i] != 'e' && s[i] != 'E' {
		return false, 0, false
	}
	exp, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return false, 0, false
	}
	return zero, exp, true
}

func (p *parser) acceleratorList(list corev1.ResourceList, accs []accelerator) {
	if !p.withinLimit("resources.accelerators", "accelerators", len(accs), p.opts.maxAccelerators()) {
		return
	}
	first := make(map[corev1.ResourceName]int, len(accs))
	for i, a := range accs {
		if a.dropped {
			continue
		}
		path := indexPath("resources.accelerators", i)
		name := corev1.ResourceName(a.ResourceType)
		problem := lengthProblem(a.ResourceType, maxNameBytes)
		if problem == "" {
			problem = kuberules.ExtendedResourceNameProblem(name)
		}
		if problem != "" {
			p.warn(path+".resourceType", "%s is not an extended resource name: %s; entry dropped", text.Quote(a.ResourceType, quoteBytes), problem)
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
		if kuberules.TooLarge(name, sum) {
			p.warn(path, "%s repeats resources.accelerators[%d] and the sum is too large: %s; entry dropped", name, j, kuberules.LimitText(name))
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
	if !p.withinLimit("taints", "taints", len(in), p.opts.maxTaints()) {
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
		if problem := taintKeyProblem(t.Key); problem != "" {
			p.warn(path+".key", "%s is not a valid taint key: %s; entry dropped", text.Quote(t.Key, quoteBytes), problem)
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
		problem := lengthProblem(t.Value, maxValueBytes)
		if problem == "" {
			problem = kuberules.TaintValueProblem(t.Value)
		}
		if problem != "" {
			p.warn(path+".value", "%s is not a valid taint value: %s; entry dropped, the plugin's current %s taints kept", text.Quote(t.Value, quoteBytes), problem, t.Key)
			kept = append(kept, t.Key)
			continue
		}
		effect := corev1.TaintEffect(t.Effect)
		if !kuberules.IsValidEffect(effect) {
			if t.Effect == "" {
				p.warn(path+".effect", "missing; NoSchedule used")
			} else {
				p.warn(path+".effect", "%s is not NoSchedule, PreferNoSchedule or NoExecute; NoSchedule used", text.Quote(t.Effect, quoteBytes))
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

// taintKeyProblem returns why key is not a valid taint key, or "" if it is
// one; a key too long to be one is not shown to the name rules.
func taintKeyProblem(key string) string {
	if problem := lengthProblem(key, maxNameBytes); problem != "" {
		return problem
	}
	return kuberules.TaintKeyProblem(key)
}

// lengthProblem returns, in the words of apimachinery, why s is longer than
// max bytes, or "" if it is not.
func lengthProblem(s string, max int) string {
	if len(s) <= max {
		return ""
	}
	return "must be no more than " + strconv.Itoa(max) + " bytes"
}

// utf8Text returns body as UTF-8 text: without a UTF-8 byte order mark
// (which RFC 8259 lets a reader ignore), and decoded when it is UTF-16 or
// UTF-32, as told by a byte order mark or by a '{' with zero bytes beside
// it (RFC 4627, section 3). encoding names what it was decoded from, or is
// "" for UTF-8. It allocates only to decode.
func utf8Text(body []byte) (out []byte, encoding string) {
	b := body
	switch {
	case hasPrefix(b, "\xEF\xBB\xBF"):
		return b[3:], ""
	case hasPrefix(b, "\xFF\xFE\x00\x00"):
		return decodeUTF32(b[4:], binary.LittleEndian), "UTF-32 (little-endian)"
	case hasPrefix(b, "\x00\x00\xFE\xFF"):
		return decodeUTF32(b[4:], binary.BigEndian), "UTF-32 (big-endian)"
	case hasPrefix(b, "\xFF\xFE"):
		return decodeUTF16(b[2:], binary.LittleEndian), "UTF-16 (little-endian)"
	case hasPrefix(b, "\xFE\xFF"):
		return decodeUTF16(b[2:], binary.BigEndian), "UTF-16 (big-endian)"
	case hasPrefix(b, "{\x00\x00\x00"):
		return decodeUTF32(b, binary.LittleEndian), "UTF-32 (little-endian)"
	case hasPrefix(b, "\x00\x00\x00{"):
		return decodeUTF32(b, binary.BigEndian), "UTF-32 (big-endian)"
	case hasPrefix(b, "{\x00"):
		return decodeUTF16(b, binary.LittleEndian), "UTF-16 (little-endian)"
	case hasPrefix(b, "\x00{"):
		return decodeUTF16(b, binary.BigEndian), "UTF-16 (big-endian)"
	}
	return body, ""
}

// maybeNotUTF8 reports whether a body that starts with c may be one that
// utf8Text changes: a byte order mark, or UTF-16 or UTF-32 text.
func maybeNotUTF8(c byte) bool {
	return c == 0xEF || c == 0xFF || c == 0xFE || c == 0 || c == '{'
}

func hasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// decodeUTF16 returns b, UTF-16 text in order, as UTF-8. Unpaired
// surrogates and an odd last byte become U+FFFD.
func decodeUTF16(b []byte, order binary.ByteOrder) []byte {
	out := make([]byte, 0, len(b)/2+8)
	for i := 0; i < len(b); i += 2 {
		if i+1 == len(b) {
			out = utf8.AppendRune(out, utf8.RuneError)
			break
		}
		r := rune(order.Uint16(b[i:]))
		if utf16.IsSurrogate(r) {
			pair := utf8.RuneError
			if i+3 < len(b) {
				pair = utf16.DecodeRune(r, rune(order.Uint16(b[i+2:])))
			}
			if pair != utf8.RuneError {
				i += 2
			}
			r = pair
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// decodeUTF32 returns b, UTF-32 text in order, as UTF-8. Code points that
// are not Unicode characters and trailing bytes become U+FFFD.
func decodeUTF32(b []byte, order binary.ByteOrder) []byte {
	out := make([]byte, 0, len(b)/4+8)
	for i := 0; i < len(b); i += 4 {
		r := utf8.RuneError
		if i+3 < len(b) {
			if c := order.Uint32(b[i:]); c <= unicode.MaxRune && utf8.ValidRune(rune(c)) {
				r = rune(c)
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// nonFiniteTokens are the spellings of NaN and the infinities that
// serializers write where JSON has no number: Python's json module, Gson and
// JSON5 (NaN, Infinity, -Infinity), and C's printf, awk and shell scripts
// built on them (nan, -nan, inf, -inf).
var nonFiniteTokens = [...]string{"NaN", "Infinity", "-Infinity", "nan", "-nan", "inf", "-inf"}

// nonFiniteAt returns the length of the non-finite number token that b
// starts with, or 0.
func nonFiniteAt(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case 'N', 'I', 'n', 'i', '-':
	default:
		return 0
	}
	for _, t := range nonFiniteTokens {
		if hasPrefix(b, t) && (len(b) == len(t) || isDelimiter(b[len(t)])) {
			return len(t)
		}
	}
	return 0
}

// isDelimiter reports whether c may follow a JSON value.
func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ']', '}', ':':
		return true
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// stringEnd returns the index just after the JSON string that starts at
// b[i], a '"', or len(b) if it does not end.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			break
		}
		j += i
		backslashes := 0
		for k := j - 1; k >= i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return j + 1
		}
		i = j + 1
	}
	return len(b)
}

// withoutNonFinite returns body with false in place of every non-finite
// number token that stands where a value may, and how many it replaced. It
// returns body itself when there are none.
func withoutNonFinite(body []byte) ([]byte, int) {
	var out []byte
	n, copied := 0, 0
	prev := byte(0) // the last byte outside strings and spaces
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"':
			i = stringEnd(body, i)
			prev = '"'
			continue
		case isSpace(c):
			i++
			continue
		case prev == ':' || prev == '[' || prev == ',':
			if t := nonFiniteAt(body[i:]); t > 0 {
				if out == nil {
					out = make([]byte, 0, len(body)+len(body)/8)
				}
				out = append(out, body[copied:i]...)
				out = append(out, "false"...)
				i += t
				copied, prev = i, 'e'
				n++
				continue
			}
		}
		prev = c
		i++
	}
	if n == 0 {
		return body, 0
	}
	return append(out, body[copied:]...), n
}

// A walker reads a reply body along the fields that Parse reads, for what
// the decoder cannot tell: keys given more than once (encoding/json keeps
// the last value of a field, but merges repeated objects), and which of
// those fields held a non-finite number. The body is JSON but for those
// numbers; the walker never fails on other input, it only stops early.
type walker struct {
	b         []byte
	i         int
	opts      Options
	findings  []finding
	overLimit bool // a list was over its limit
}

// A finding is a key given count times, or a field that held token.
type finding struct {
	at    where
	count int
	token string
}

// where is the JSON path of a field that Parse reads, as indexes into
// levelFields, so that a walk builds no string unless it finds something.
type where struct {
	top, sub, field int8  // field of the reply, of resources, of a list entry; -1 for none
	index           int32 // of an entry in a list, or -1
}

var nowhere = where{top: -1, sub: -1, field: -1, index: -1}

func (w where) String() string {
	s := levelFields[replyLevel][w.top]
	entry := taintLevel
	if w.sub >= 0 {
		s += "." + levelFields[resourcesLevel][w.sub]
		entry = acceleratorLevel
	}
	if w.index >= 0 {
		s = indexPath(s, int(w.index))
	}
	if w.field >= 0 {
		s += "." + levelFields[entry][w.field]
	}
	return s
}

// within reports whether w is at or under the field at, which is a path
// to a field (not to a list entry).
func (w where) within(at where) bool {
	switch {
	case w.top != at.top:
		return false
	case at.sub >= 0 && w.sub != at.sub:
		return false
	case at.field >= 0 && (w.index != at.index || w.field != at.field):
		return false
	}
	return true
}

// The objects that Parse reads, and their fields.
type level int

const (
	replyLevel level = iota
	resourcesLevel
	acceleratorLevel
	taintLevel
)

var levelFields = [...][]string{
	replyLevel:       {"status", "resources", "taints"},
	resourcesLevel:   {"cpu", "memory", "pods", "accelerators", "basis"},
	acceleratorLevel: {"resourceType", "available"},
	taintLevel:       {"key", "value", "effect"},
}

// The indexes in levelFields of the fields that hold an object or a list.
const (
	resourcesField    = 1
	taintsField       = 2
	acceleratorsField = 3
)

// maxKeyBytes is the longest quoted key that may name a field, every
// character escaped (\u017F, long s, folds to s).
const maxKeyBytes = 2 + 6*len("accelerators")

// walk walks body, a JSON object, and returns the walker with its
// findings in the order met; of a repeated key only the last value's
// findings are kept, and none from a list over its limit, which Parse
// ignores whole.
func walk(body []byte, opts Options) walker {
	w := walker{b: body, opts: opts}
	w.space()
	if w.i < len(w.b) && w.b[w.i] == '{' {
		w.object(nowhere, replyLevel)
	}
	return w
}

func (w *walker) space() {
	for w.i < len(w.b) && isSpace(w.b[w.i]) {
		w.i++
	}
}

// object walks the object at w.b[w.i], a '{', whose fields Parse reads at
// the given level, at path at.
func (w *walker) object(at where, lv level) {
	names := levelFields[lv]
	var count [5]int // the most fields a level has
	for w.i++; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			break
		}
		start := w.i
		w.i = stringEnd(w.b, w.i)
		k := fieldIndex(w.b[start:w.i], names)
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			break
		}
		w.i++
		w.space()
		if k < 0 {
			w.skip()
		} else {
			child := at.child(lv, k)
			if count[k]++; count[k] > 1 {
				w.drop(child)
				w.repeated(child, count[k])
			}
			w.field(child, lv, k)
		}
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			break
		}
	}
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
	}
}

// repeated notes that the key of the field at was met for the n-th time,
// where it was first repeated.
func (w *walker) repeated(at where, n int) {
	for i := len(w.findings) - 1; i >= 0 && n > 2; i-- {
		if f := &w.findings[i]; f.count > 0 && f.at == at {
			f.count = n
			return
		}
	}
	w.findings = append(w.findings, finding{at: at, count: n})
}

// child returns the path of the k-th field of an object at level lv, at
// path at.
func (at where) child(lv level, k int) where {
	switch lv {
	case replyLevel:
		at.top = int8(k)
	case resourcesLevel:
		at.sub = int8(k)
	default:
		at.field = int8(k)
	}
	return at
}

// field walks the value of the k-th field of an object at level lv.
func (w *walker) field(at where, lv level, k int) {
	if w.i >= len(w.b) {
		return
	}
	c := w.b[w.i]
	switch {
	case lv == replyLevel && k == resourcesField && c == '{':
		w.object(at, resourcesLevel)
	case lv == replyLevel && k == taintsField && c == '[':
		w.list(at, taintLevel, w.opts.maxTaints())
	case lv == resourcesLevel && k == acceleratorsField && c == '[':
		w.list(at, acceleratorLevel, w.opts.maxAccelerators())
	default:
		w.value(at)
	}
}

// list walks the list at w.b[w.i], a '[', of objects at level lv. Entries
// past limit are skipped, and a list over it leaves no findings.
func (w *walker) list(at where, lv level, limit int) {
	n := 0
	for w.i++; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] == ']' {
			break
		}
		entry := at
		entry.index = int32(min(n, math.MaxInt32))
		switch {
		case n >= limit:
			w.skip()
		case w.b[w.i] == '{':
			w.object(entry, lv)
		default:
			w.value(entry)
		}
		n++
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			break
		}
	}
	if w.i < len(w.b) && w.b[w.i] == ']' {
		w.i++
	}
	if n > limit {
		w.drop(at)
		w.overLimit = true
	}
}

// value walks a value that Parse reads but the walker does not enter,
// noting a non-finite number.
func (w *walker) value(at where) {
	if n := nonFiniteAt(w.b[w.i:]); n > 0 {
		w.findings = append(w.findings, finding{at: at, token: string(w.b[w.i : w.i+n])})
		w.i += n
		return
	}
	w.skip()
}

// skip moves past the value at w.b[w.i], without recursion.
func (w *walker) skip() {
	if w.i >= len(w.b) {
		return
	}
	switch w.b[w.i] {
	case '"':
		w.i = stringEnd(w.b, w.i)
	case '{', '[':
		depth := 0
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case '"':
				w.i = stringEnd(w.b, w.i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.i++
			if depth == 0 {
				return
			}
		}
	default:
		for w.i < len(w.b) && !isDelimiter(w.b[w.i]) {
			w.i++
		}
	}
}

// drop forgets the findings at or under the field at, but that its key
// is repeated.
func (w *walker) drop(at where) {
	kept := w.findings[:0]
	for _, f := range w.findings {
		if !f.at.within(at) || f.count > 0 && f.at == at {
			kept = append(kept, f)
		}
	}
	w.findings = kept
}

// fieldIndex returns the index in names of the field that the quoted key
// names, matched as encoding/json matches it (exactly, or else without
// regard to case, after unescaping), or -1.
func fieldIndex(quoted []byte, names []string) int {
	if len(quoted) < 2 || len(quoted) > maxKeyBytes {
		return -1
	}
	key := quoted[1 : len(quoted)-1]
	for k, name := range names {
		if string(key) == name {
			return k
		}
	}
	if bytes.IndexByte(key, '\\') >= 0 {
		var s string
		if json.Unmarshal(quoted, &s) != nil {
			return -1
		}
		key = []byte(s)
	}
	for k, name := range names {
		if bytes.EqualFold(key, []byte(name)) {
			return k
		}
	}
	return -1
}
