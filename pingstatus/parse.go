package pingstatus

import (
	"bytes"
	"fmt"
)

// Parse turns a reply body into a [NodePatch] and the warnings for
// everything it refused. It never fails: a legacy body gives an empty patch
// and no warning, a body that cannot be used gives an empty patch and a
// warning, and in a JSON object each field is judged on its own, so one bad
// field never discards the good ones.
//
// The stages, each in its own file:
//
//  1. the text (encoding.go): within the size limit, a byte order mark
//     dropped, UTF-16 and UTF-32 decoded; a body that is not a JSON
//     object is a legacy reply;
//  2. the walk (walk.go, scan.go, nonfinite.go, nearmiss.go): one light
//     pass over the fields Parse reads (fields.go) that finds what
//     encoding/json cannot tell, keys given twice, lists over their
//     limit, NaN and the infinities, and unknown keys that look like
//     known fields;
//  3. the decode (decode.go, devicedecode.go): one json.Unmarshal into
//     mirrors of the wire types (mirror.go), or, when the walk or the
//     decoder found a problem, field by field, so that each bad field has
//     its own warning and the good ones are kept;
//  4. the rules (rules.go, labels.go, devices.go): each quantity,
//     accelerator, taint, label and device group judged by Kubernetes'
//     rules (internal/kuberules); a device entry is read into a typed
//     group first (devicesyntax.go), and judged by the rules that
//     [Options.CheckDevices] runs on a patch built by hand
//     (devicerules.go).
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
	// keptOnBadLabel are keys of label entries that the field-by-field
	// decode dropped because their value was not a string.
	keptOnBadLabel []string
	// nonFinite maps the path of a field that held NaN, Infinity or the
	// like to that token; the body the decoder reads has false there.
	nonFinite map[string]string
	// listsDevices says that the reply lists devices, so that its
	// accelerators may not count them again (rule 18).
	listsDevices bool
}

// warn adds a warning about the part s of the node, at path, saying what
// was done (a).
func (p *parser) warn(s Subject, a Action, path, format string, args ...any) {
	p.warnings = append(p.warnings, Warning{Path: path, Message: fmt.Sprintf(format, args...), Subject: s, Action: a})
}

func (p *parser) parse(body []byte) NodePatch {
	if limit := p.opts.maxBodyBytes(); len(body) > limit {
		p.warn(SubjectReply, Ignored, "", "reply is %d bytes, more than the limit of %d; ignored", len(body), limit)
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
		p.warn(SubjectReply, Repaired, "", "reply is %s text, not UTF-8 as JSON must be; decoded and read", encoding)
	}
	r, ok := p.decode(body)
	if !ok {
		return NodePatch{Kind: Unusable}
	}
	patch := NodePatch{Kind: Structured, Status: r.Status}
	p.listsDevices = r.Devices != nil && len(*r.Devices) > 0
	if r.Resources != nil {
		patch.Resources = p.resources(r.Resources)
		patch.Basis = p.basis(r.Resources.Basis)
	}
	if r.Taints != nil {
		patch.ReplaceTaints, patch.Taints, patch.KeptTaintKeys = p.taints(*r.Taints)
	}
	if r.Labels != nil {
		patch.ReplaceLabels, patch.Labels, patch.KeptLabelKeys = p.labels(r.Labels)
	}
	if r.Devices != nil {
		patch.ReplaceDevices, patch.Devices, patch.KeptDeviceGroups = p.devices(&groupList{fromReply: true, entries: *r.Devices})
	}
	return patch
}
