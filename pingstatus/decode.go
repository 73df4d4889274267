package pingstatus

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/text"
)

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
			p.warn(SubjectReply, Ignored, "", "reply looks like a JSON object but does not parse (%s); ignored", syntaxProblem(body))
			return reply{}, false
		}
		r = reply{}
		if raw, err = unmarshal(fixed, &r, w.overLimit); notJSON(err, fixed) {
			p.warn(SubjectReply, Ignored, "", "reply looks like a JSON object but does not parse (%s); ignored", syntaxProblem(fixed))
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
			p.nonFinite[f.path()] = f.token
			continue
		}
		repeated = true
		p.warn(f.at.subject(), Repaired, f.path(), "given %d times; the last one is used", f.count)
	}
	p.nearMisses(&w)
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

// syntaxProblem says in the library's own words why body, which is not
// JSON, does not parse: encoding/json's messages change from one Go
// release to the next, and a warning must not.
func syntaxProblem(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	var first json.RawMessage
	err := dec.Decode(&first)
	switch {
	case err == nil:
		return "something follows the object, which ends at byte " + strconv.FormatInt(dec.InputOffset(), 10)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends before the object does"
	}
	return "it is not valid JSON"
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

// raw* mirror reply with every field left undecoded. (A device entry
// and its objects are split without them: devicedecode.go.)
type rawReply struct {
	Status    json.RawMessage `json:"status"`
	Resources json.RawMessage `json:"resources"`
	Taints    json.RawMessage `json:"taints"`
	Labels    json.RawMessage `json:"labels"`
	Devices   json.RawMessage `json:"devices"`
}

type rawResources struct {
	CPU              json.RawMessage `json:"cpu"`
	Memory           json.RawMessage `json:"memory"`
	Pods             json.RawMessage `json:"pods"`
	Accelerators     json.RawMessage `json:"accelerators"`
	Basis            json.RawMessage `json:"basis"`
	EphemeralStorage json.RawMessage `json:"ephemeralStorage"`
	Hugepages        json.RawMessage `json:"hugepages"`
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
	p.field(SubjectReply, Ignored, raw.Status, fieldPath(replyLevel, statusField), &r.Status, "a string", "ignored")
	if isPresent(raw.Resources) {
		var rr rawResources
		if p.field(SubjectResource, Refused, raw.Resources, fieldPath(replyLevel, resourcesField), &rr, "an object", "resources left unchanged") {
			r.Resources = &resources{}
			p.field(SubjectResource, Refused, rr.CPU, fieldPath(resourcesLevel, cpuField), &r.Resources.CPU, "a string or a number", "cpu left unchanged")
			p.field(SubjectResource, Refused, rr.Memory, fieldPath(resourcesLevel, memoryField), &r.Resources.Memory, "a string or a number", "memory left unchanged")
			p.field(SubjectResource, Refused, rr.Pods, fieldPath(resourcesLevel, podsField), &r.Resources.Pods, "a string or a number", "pods left unchanged")
			p.field(SubjectResource, Refused, rr.EphemeralStorage, fieldPath(resourcesLevel, ephemeralStorageField), &r.Resources.EphemeralStorage, "a string or a number", "ephemeral-storage left unchanged")
			r.Resources.Hugepages = p.hugepageSizes(rr.Hugepages)
			r.Resources.Accelerators = p.accelerators(rr.Accelerators)
			if isPresent(rr.Basis) {
				var basis string
				if p.field(SubjectResource, Repaired, rr.Basis, fieldPath(resourcesLevel, basisField), &basis, "a string", "read as \"total\": nothing is added to the figures") {
					r.Resources.Basis = &basis
				} else {
					basis = unknownBasis
					r.Resources.Basis = &basis
				}
			}
		}
	}
	taintsPath := fieldPath(replyLevel, taintsField)
	if isPresent(raw.Taints) && p.withinLimit(SubjectTaint, taintsPath, "taints", entryCount(raw.Taints), p.opts.maxTaints()) {
		var items []json.RawMessage
		if p.field(SubjectTaint, Refused, raw.Taints, taintsPath, &items, "an array", "taints left unchanged") {
			taints := make([]taint, len(items))
			for i, item := range items {
				taints[i] = p.taint(item, indexPath(taintsPath, i))
			}
			r.Taints = &taints
		}
	}
	labelsPath := fieldPath(replyLevel, labelsField)
	if isPresent(raw.Labels) && p.withinLimit(SubjectLabel, labelsPath, "labels", entryCount(raw.Labels), p.opts.maxLabels()) {
		var entries map[string]json.RawMessage
		if p.field(SubjectLabel, Refused, raw.Labels, labelsPath, &entries, "an object", "labels left unchanged") {
			r.Labels = p.labelValues(entries)
		}
	}
	devicesPath := fieldPath(replyLevel, devicesField)
	if isPresent(raw.Devices) && p.withinLimit(SubjectDevice, devicesPath, "devices", entryCount(raw.Devices), p.opts.maxDevices()) {
		r.Devices = p.deviceEntries(raw.Devices)
	}
	return r
}

// hugepageSizes decodes resources.hugepages, each size on its own: a
// value that is not a string or a number is refused with a warning, and
// the node keeps what it has for that size.
func (p *parser) hugepageSizes(raw json.RawMessage) map[string]quantity {
	path := fieldPath(resourcesLevel, hugepagesField)
	if !isPresent(raw) || !p.withinLimit(SubjectResource, path, "hugepages", entryCount(raw), maxHugepageSizes) {
		return nil
	}
	var entries map[string]json.RawMessage
	if !p.field(SubjectResource, Refused, raw, path, &entries, "an object", "hugepages left unchanged") {
		return nil
	}
	pages := make(map[string]quantity, len(entries))
	for _, size := range slices.Sorted(maps.Keys(entries)) {
		var q quantity
		if p.field(SubjectResource, Refused, entries[size], hugepagesPath(size), &q, "a string or a number", "left unchanged") {
			pages[size] = q
		}
	}
	return pages
}

// labelValues decodes the labels' values. A value that is not a string
// (nor null, read as "") drops its entry, and the plugin's current label
// with its key is kept (if the key is valid: no label has an invalid one).
func (p *parser) labelValues(entries map[string]json.RawMessage) map[string]string {
	labels := make(map[string]string, len(entries))
	for _, key := range slices.Sorted(maps.Keys(entries)) {
		var value string
		if json.Unmarshal(entries[key], &value) == nil {
			labels[key] = value
			continue
		}
		done := "entry dropped"
		if p.opts.labelCheck().Check(key, "").Mine() {
			done += ", the plugin's current " + key + " label kept"
			p.keptOnBadLabel = append(p.keptOnBadLabel, key)
		}
		path := labelPath(key)
		p.warn(SubjectLabel, Refused, path, "must be a string, got %s; %s", p.describe(path, entries[key]), done)
	}
	return labels
}

// withinLimit reports whether the list of n entries at path, of what,
// is within limit, and warns that the list is ignored when it is not.
func (p *parser) withinLimit(s Subject, path, what string, n, limit int) bool {
	if n <= limit {
		return true
	}
	p.warn(s, Ignored, path, "%d entries, more than the limit of %d; %s left unchanged", n, limit, what)
	return false
}

func (p *parser) accelerators(raw json.RawMessage) []accelerator {
	var items []json.RawMessage
	list := fieldPath(resourcesLevel, acceleratorsField)
	if !isPresent(raw) || !p.withinLimit(SubjectResource, list, "accelerators", entryCount(raw), p.opts.maxAccelerators()) ||
		!p.field(SubjectResource, Refused, raw, list, &items, "an array", "accelerators left unchanged") {
		return nil
	}
	out := make([]accelerator, len(items))
	for i, item := range items {
		path := indexPath(list, i)
		var ra rawAccelerator
		a := &out[i]
		a.dropped = !p.field(SubjectResource, Refused, item, path, &ra, "an object", "entry dropped") ||
			!p.field(SubjectResource, Refused, ra.ResourceType, path+fieldPath(acceleratorLevel, resourceTypeField), &a.ResourceType, "a string", "entry dropped") ||
			!p.field(SubjectResource, Refused, ra.Available, path+fieldPath(acceleratorLevel, availableField), &a.Available, "a string or a number", "entry dropped")
	}
	return out
}

// taint decodes one entry. An entry that is not an object, or whose key is
// not a string, is dropped; one whose value is not a string is dropped and
// its key's current taints kept (if the key is valid: no taint has an
// invalid one); an effect that is not a string becomes NoSchedule.
func (p *parser) taint(raw json.RawMessage, path string) taint {
	var rt rawTaint
	var t taint
	if !p.field(SubjectTaint, Refused, raw, path, &rt, "an object", "entry dropped") ||
		!p.field(SubjectTaint, Refused, rt.Key, path+fieldPath(taintLevel, keyField), &t.Key, "a string", "entry dropped") {
		t.dropped = true
		return t
	}
	if isPresent(rt.Value) && json.Unmarshal(rt.Value, &t.Value) != nil {
		done := "entry dropped"
		if p.taintCheck().Check(&corev1.Taint{Key: t.Key}).Key == "" {
			done += ", the plugin's current " + t.Key + " taints kept"
			p.keptOnBadValue = append(p.keptOnBadValue, t.Key)
		}
		valuePath := path + fieldPath(taintLevel, valueField)
		p.warn(SubjectTaint, Refused, valuePath, "must be a string, got %s; %s", p.describe(valuePath, rt.Value), done)
		t.dropped = true
		return t
	}
	if !p.field(SubjectTaint, Repaired, rt.Effect, path+fieldPath(taintLevel, effectField), &t.Effect, "a string", "NoSchedule used") {
		t.Effect = string(corev1.TaintEffectNoSchedule)
	}
	return t
}

// field decodes raw into dst. A missing or null raw leaves dst alone and
// succeeds; a value of the wrong JSON type is warned about at path, about
// s, saying what was done (a, and in words done).
func (p *parser) field(s Subject, a Action, raw json.RawMessage, path string, dst any, want, done string) bool {
	if !isPresent(raw) {
		return true
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		p.warn(s, a, path, "must be %s, got %s; %s", want, p.describe(path, raw), done)
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
