package pingstatus

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
)

// Parse turns a reply body into a [NodePatch] and the warnings for
// everything it refused. It never fails: a legacy body gives an empty patch
// and no warning, a body that cannot be used gives an empty patch and a
// warning, and in a JSON object each field is judged on its own, so one bad
// field never discards the good ones.
//
// The stages, each in its own file:
//
//  1. the text (internal/jsontree, UTF8Text): within the size limit, a
//     byte order mark dropped, UTF-16 and UTF-32 decoded; a body that is
//     not a JSON object is a legacy reply;
//  2. the tree (internal/jsontree, Read, which knows no field of a
//     reply): the text read once, in one pass, into a light
//     syntax tree of its values, each scalar's token as written and
//     each key as spelled, accepting what encoding/json accepts and NaN
//     and the infinities where a value may stand; a body that is no
//     JSON object is unusable. Its keys are judged on it (keys.go,
//     nearmiss.go): keys given twice, and unknown keys that look like
//     known fields (fields.go, from the wire types);
//  3. the rules (rules.go, labels.go, devices.go, parts.go): one pass
//     over the tree, along the fields of the wire types, that reads each
//     value from its token into a typed value, and hands it to the
//     judge of its kind: of a quantity, an accelerator, a taint, a
//     label, a device group (devicesyntax.go reads a device entry,
//     devicerules.go judges it), a part, by Kubernetes' rules
//     (internal/kuberules). [Options.Check] hands a patch built by hand
//     to the same judges (check.go). A value of the wrong JSON type is
//     refused first, and what is over its limit is counted, not read.
//
// The warnings come in the order of the stages: the text's, the keys',
// those about values of the wrong JSON type, then the rules'. The patch
// remembers that it was judged, and with which options.
func Parse(body []byte, opts Options) (NodePatch, []Warning) {
	p := parser{opts: opts}
	patch := p.parse(body)
	if patch.Kind == Structured { // a legacy or unusable reply's patch holds nothing to judge, and costs nothing
		patch.seal(&judgement{opts: opts})
	}
	return patch, p.result()
}

type parser struct {
	opts Options
	// warnings are the text's and the keys', then those of the rules.
	warnings []Warning
	// shape are the warnings about values of the wrong JSON type and
	// lists over their limits, which come before the rules'.
	shape []Warning
	// rulesFrom is where the rules' warnings start in warnings.
	rulesFrom int
	// listsDevices says that the reply, or the part being read, lists
	// devices, so that its accelerators may not count them again (rule
	// device-not-counted).
	listsDevices bool
	// free says that the figures being judged, the reply's or the
	// part's, are what the backend has available now (their basis is
	// "available", or not given), so that a zero cpu or memory says the
	// backend is full (rule resource-full).
	free bool
	// at is the path of the part being read ("nodes[3]"), or of the
	// patch being checked ("patch"), which every warning's path then
	// starts with, or "".
	at string
	// part is the name of the part being read, which every warning then
	// carries, or "".
	part string
}

// result returns the warnings in order.
func (p *parser) result() []Warning {
	if len(p.shape) == 0 {
		return p.warnings
	}
	out := make([]Warning, 0, len(p.warnings)+len(p.shape))
	out = append(out, p.warnings[:p.rulesFrom]...)
	out = append(out, p.shape...)
	return append(out, p.warnings[p.rulesFrom:]...)
}

// warn adds a warning of the rule named rule about the part s of the
// node, at path, saying what was done (a).
func (p *parser) warn(rule string, s Subject, a Action, path, format string, args ...any) {
	p.warnings = append(p.warnings, p.warning(rule, s, a, path, fmt.Sprintf(format, args...)))
}

// warning is the warning of the rule named rule about the part s of the
// node, at path within the part or patch being read, saying message.
func (p *parser) warning(rule string, s Subject, a Action, path, message string) Warning {
	return Warning{Path: p.path(path), Message: message, Subject: s, Action: a, Rule: rule, Part: p.part}
}

// path returns path within the part being read, if any.
func (p *parser) path(path string) string {
	switch {
	case p.at == "":
		return path
	case path == "":
		return p.at
	}
	return p.at + "." + path
}

// shapeWarn adds a warning about a value of the wrong JSON type or a list
// over its limit, as warn does.
func (p *parser) shapeWarn(rule string, s Subject, a Action, path, format string, args ...any) {
	p.shape = append(p.shape, p.warning(rule, s, a, path, fmt.Sprintf(format, args...)))
}

func (p *parser) parse(body []byte) NodePatch {
	if limit := p.opts.maxBodyBytes(); len(body) > limit {
		p.warn(ruleReplyUnusable, SubjectReply, Ignored, "", "reply is %d bytes, more than the limit of %d; ignored", len(body), limit)
		return NodePatch{Kind: Unusable}
	}
	var encoding string
	if len(body) >= 2 && jsontree.MaybeNotUTF8(body[0]) {
		body, encoding = jsontree.UTF8Text(body)
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return NodePatch{Kind: Legacy}
	}
	if encoding != "" {
		p.warn(ruleReplyEncoding, SubjectReply, Repaired, "", "reply is %s text, not UTF-8 as JSON must be; decoded and read", encoding)
	}
	if len(body) > jsontree.MaxTextBytes { // only with a MaxBodyBytes beyond it
		p.warn(ruleReplyUnusable, SubjectReply, Ignored, "", "reply is %d bytes, more than the limit of %d; ignored", len(body), jsontree.MaxTextBytes)
		return NodePatch{Kind: Unusable}
	}
	t, problem := jsontree.Read(body)
	if problem != nil {
		p.warn(ruleReplyUnusable, SubjectReply, Ignored, "", "reply looks like a JSON object but does not parse (%s); ignored", problem)
		return NodePatch{Kind: Unusable}
	}
	p.keys(t)
	p.rulesFrom = len(p.warnings)
	return p.reply(t)
}

// reply reads and judges the reply, the tree t.
func (p *parser) reply(t *jsontree.Tree) NodePatch {
	f := memberFields(t, 0, replyLevel)
	patch := NodePatch{Kind: Structured}
	if s := f[statusField]; t.Present(s) && p.expect(t, s, SubjectReply, Ignored, fieldPath(replyLevel, statusField), stringKinds, "ignored") {
		patch.Status = t.Str(s)
	}
	if t.Present(f[nodesField]) {
		p.parts(t, f, &patch)
	} else {
		p.node(t, f, &patch)
	}
	return patch
}

// node reads and judges the fields of a node, f, the reply's or a part's,
// into patch.
func (p *parser) node(t *jsontree.Tree, f [maxLevelFields]int, patch *NodePatch) {
	devices := f[devicesField]
	p.listsDevices = t.Kind(devices) == jsontree.Array && t.Len(devices) > 0 && treeCount(t, devices) <= p.opts.maxDevices()
	if r := f[resourcesField]; t.Present(r) && p.expect(t, r, SubjectResource, Refused, fieldPath(replyLevel, resourcesField), objectKinds, "resources left unchanged") {
		patch.Resources, patch.Basis, patch.Full = p.resources(t, r)
	}
	if taints := f[taintsField]; t.Present(taints) {
		patch.ReplaceTaints, patch.Taints, patch.KeptTaintKeys = p.taints(t, taints)
	}
	if labels := f[labelsField]; t.Present(labels) {
		patch.ReplaceLabels, patch.Labels, patch.KeptLabelKeys = p.labels(t, labels)
	}
	if t.Present(devices) {
		if l, ok := p.deviceEntries(t, devices); ok {
			patch.ReplaceDevices, patch.Devices, patch.KeptDeviceGroups = p.devices(l)
		}
	}
}

// The JSON types a value may be of, as kinds.
type kinds uint16

const (
	stringKinds   = kinds(1 << jsontree.String)
	quantityKinds = kinds(1<<jsontree.String | 1<<jsontree.Number)
	numberKinds   = kinds(1 << jsontree.Number)
	boolKinds     = kinds(1<<jsontree.True | 1<<jsontree.False)
	objectKinds   = kinds(1 << jsontree.Object)
	arrayKinds    = kinds(1 << jsontree.Array)
)

// String returns the kinds as a warning says a value must be of them.
func (k kinds) String() string {
	switch k {
	case stringKinds:
		return "a string"
	case quantityKinds:
		return "a string or a number"
	case numberKinds:
		return "a number"
	case boolKinds:
		return "a boolean"
	case objectKinds:
		return "an object"
	}
	return "an array"
}

// expect reports whether the value n, present, is of one of the kinds
// want, and warns when it is not, at path, about s, saying what was done
// (a, and in words done).
func (p *parser) expect(t *jsontree.Tree, n int, s Subject, a Action, path string, want kinds, done string) bool {
	if want&(1<<t.Kind(n)) != 0 {
		return true
	}
	p.shapeWarn(ruleValueType, s, a, path, "must be %s, got %s; %s", want, describe(t, n), done)
	return false
}

// withinLimit reports whether the list of n entries at path, of what,
// is within limit, and warns by the rule named rule that the list is
// ignored when it is not.
func (p *parser) withinLimit(rule string, s Subject, path, what string, n, limit int) bool {
	if n <= limit {
		return true
	}
	p.shapeWarn(rule, s, Ignored, path, "%d entries, more than the limit of %d; %s left unchanged", n, limit, what)
	return false
}

// treeCount returns the number of entries of n, a list or an object, or 0.
func treeCount(t *jsontree.Tree, n int) int {
	if k := t.Kind(n); k == jsontree.Array || k == jsontree.Object {
		return t.Len(n)
	}
	return 0
}

// objectCount returns the number of entries of n if it is an object, or 0.
func objectCount(t *jsontree.Tree, n int) int {
	if t.Kind(n) == jsontree.Object {
		return t.Len(n)
	}
	return 0
}

// objectFields returns the fields of n at level lv, as [tree.fields]
// does, or none of them when n is no object (absent or null).
func objectFields(t *jsontree.Tree, n int, lv level) [maxLevelFields]int {
	if t.Kind(n) != jsontree.Object {
		return [maxLevelFields]int{none, none, none, none, none, none, none}
	}
	return memberFields(t, n, lv)
}

// strOr returns the string n, or def when n is absent or null.
func strOr(t *jsontree.Tree, n int, def string) string {
	if !t.Present(n) {
		return def
	}
	return t.Str(n)
}

// describe names the value n for a warning: its type, with the value
// itself (quoted, if a string) when it is short, or the non-finite
// number that stands there.
func describe(t *jsontree.Tree, n int) string {
	raw := t.Token(n)
	kind := "a number"
	switch t.Kind(n) {
	case jsontree.Object:
		return "an object"
	case jsontree.Array:
		return "an array"
	case jsontree.NonFinite:
		return string(raw) + ", a number JSON does not have"
	case jsontree.String:
		if len(raw) > 40 {
			return "a string"
		}
		return "a string " + text.Quote(jsontree.Unquote(raw), quoteBytes)
	case jsontree.True, jsontree.False:
		kind = "a boolean"
	}
	if len(raw) > 40 {
		return kind
	}
	return kind + " " + string(raw)
}

// indexPath returns list[i] without fmt.
func indexPath(list string, i int) string {
	return list + "[" + strconv.Itoa(i) + "]"
}
