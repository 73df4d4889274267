package pingstatus

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/pingnode/pingnode/internal/kuberules"
)

// The field-by-field decode of the devices list. A device's attribute is
// three objects deep in the list (a device's taint two), and json.Unmarshal checks and copies all
// of its input at each level it is called on; so the list, its entries and
// their objects are split here along the walker's lines, in one light pass
// over text that is already known to be JSON, matching field names as
// encoding/json does (fieldIndex), and only the values at the leaves go
// through json.Unmarshal. That keeps a reply of a megabyte of devices with
// a mistake in every one within a small multiple of decoding it.

// deviceEntries decodes the devices list raw, each entry on its own. An
// entry that is not an object, or whose name is not a string, is dropped.
// Of the entries with one name only the last is decoded further, since the
// rules pass over the others, and only if its name is valid, so that a
// warning here can say that the group's current devices are kept. It
// returns nil, with a warning, when raw is not a list.
func (p *parser) deviceEntries(raw json.RawMessage) *[]device {
	list := fieldPath(replyLevel, devicesField)
	if raw[0] != '[' {
		p.warn(SubjectDevice, Refused, list, "must be an array, got %s; devices left unchanged", p.describe(list, raw))
		return nil
	}
	items := arrayItems(raw)
	out := make([]device, len(items))
	fields := make([][maxLevelFields]json.RawMessage, len(items))
	last := make(map[string]int, len(items))
	for i, item := range items {
		path := indexPath(list, i)
		var name string
		var ok bool
		if fields[i], ok = p.objectFields(item, path, deviceLevel, "entry dropped"); !ok ||
			!p.field(SubjectDevice, Refused, fields[i][nameField], path+fieldPath(deviceLevel, nameField), &name, "a string", "entry dropped") {
			out[i].dropped = true
			continue
		}
		if isPresent(fields[i][nameField]) {
			out[i].Name = &name
			last[name] = i
		}
	}
	for i := range out {
		d := &out[i]
		if !d.dropped && d.Name != nil && last[*d.Name] == i && kuberules.DeviceGroupNameProblem(*d.Name) == "" {
			p.deviceFields(d, &fields[i], indexPath(list, i))
		}
	}
	return &out
}

// deviceFields decodes the count, attributes, capacity and taints of the
// device entry d, at path, from its fields: each attribute, capacity and
// taint on its own, so that every one of the wrong JSON type has its
// warning. More attributes and capacities, or taints, than a device may
// have are counted, not decoded.
func (p *parser) deviceFields(d *device, fields *[maxLevelFields]json.RawMessage, path string) {
	done := keptDevices(*d.Name)
	d.countWarned = !p.field(SubjectDevice, Refused, fields[countField], path+fieldPath(deviceLevel, countField), &d.Count, "a string or a number", done)
	rawAttributes, rawCapacity := fields[attributesField], fields[capacityField]
	if n := objectCount(rawAttributes) + objectCount(rawCapacity); n > kuberules.MaxDeviceAttributesAndCapacities {
		d.overLimit = n
	} else {
		p.deviceParts(d, rawAttributes, rawCapacity, path, done)
	}
	p.deviceTaints(d, fields[deviceTaintsField], path+fieldPath(deviceLevel, deviceTaintsField), done)
}

// deviceParts decodes the attributes and capacity of the device entry d,
// at path.
func (p *parser) deviceParts(d *device, rawAttributes, rawCapacity json.RawMessage, path, done string) {
	attributes, ok := p.objectEntries(rawAttributes, path+fieldPath(deviceLevel, attributesField), done)
	d.refused = !ok
	capacity, ok := p.objectEntries(rawCapacity, path+fieldPath(deviceLevel, capacityField), done)
	d.refused = d.refused || !ok
	if attributes != nil {
		d.Attributes = make(map[string]deviceAttribute, len(attributes))
	}
	for _, key := range slices.Sorted(maps.Keys(attributes)) {
		at := deviceKeyPath(path, attributesField, key)
		var a deviceAttribute
		if f, ok := p.objectFields(attributes[key], at, attributeLevel, done); ok {
			ok = p.field(SubjectDevice, Refused, f[intField], at+fieldPath(attributeLevel, intField), &a.Int, "a number", done)
			ok = p.field(SubjectDevice, Refused, f[boolField], at+fieldPath(attributeLevel, boolField), &a.Bool, "a boolean", done) && ok
			ok = p.field(SubjectDevice, Refused, f[stringField], at+fieldPath(attributeLevel, stringField), &a.String, "a string", done) && ok
			ok = p.field(SubjectDevice, Refused, f[versionField], at+fieldPath(attributeLevel, versionField), &a.Version, "a string", done) && ok
			a.warned = !ok
		} else {
			a.warned = true
		}
		d.Attributes[key] = a
	}
	if capacity != nil {
		d.Capacity = make(map[string]deviceCapacity, len(capacity))
	}
	for _, key := range slices.Sorted(maps.Keys(capacity)) {
		at := deviceKeyPath(path, capacityField, key)
		var c deviceCapacity
		f, ok := p.objectFields(capacity[key], at, capacityLevel, done)
		c.warned = !ok ||
			!p.field(SubjectDevice, Refused, f[capacityValueField], at+fieldPath(capacityLevel, capacityValueField), &c.Value, "a string or a number", done)
		d.Capacity[key] = c
	}
}

// deviceTaints decodes the taints of the device entry d, raw at path,
// each on its own: an entry that is no object, or a key, value or effect
// that is no string, is warned about and marked. More taints than a
// device may have are counted, not decoded.
func (p *parser) deviceTaints(d *device, raw json.RawMessage, path, done string) {
	switch {
	case !isPresent(raw):
		return
	case raw[0] != '[':
		p.warn(SubjectDevice, Refused, path, "must be an array, got %s; %s", p.describe(path, raw), done)
		d.refused = true
		return
	}
	if n := entryCount(raw); n > kuberules.MaxDeviceTaints {
		d.taintsOver = n
		return
	}
	items := arrayItems(raw)
	d.Taints = make([]deviceTaint, len(items))
	for i, item := range items {
		at := indexPath(path, i)
		t := &d.Taints[i]
		f, ok := p.objectFields(item, at, deviceTaintLevel, done)
		if ok {
			ok = p.field(SubjectDevice, Refused, f[keyField], at+fieldPath(deviceTaintLevel, keyField), &t.Key, "a string", done)
			ok = p.field(SubjectDevice, Refused, f[valueField], at+fieldPath(deviceTaintLevel, valueField), &t.Value, "a string", done) && ok
			ok = p.field(SubjectDevice, Refused, f[effectField], at+fieldPath(deviceTaintLevel, effectField), &t.Effect, "a string", done) && ok
		}
		t.warned = !ok
	}
}

// objectFields returns the fields of raw, a JSON value, at level lv, as
// [fieldIndex] matches their names, the last value of a field given more
// than once. A missing or null raw has no fields; for one that is no
// object it warns that it must be one, at path, saying what was done
// (done), and returns false.
func (p *parser) objectFields(raw json.RawMessage, path string, lv level, done string) ([maxLevelFields]json.RawMessage, bool) {
	var fields [maxLevelFields]json.RawMessage
	if !isPresent(raw) {
		return fields, true
	}
	if raw[0] != '{' {
		p.warn(SubjectDevice, Refused, path, "must be an object, got %s; %s", p.describe(path, raw), done)
		return fields, false
	}
	members(raw, func(key []byte, value json.RawMessage) {
		if k := fieldIndex(key, levelFields[lv]); k >= 0 {
			fields[k] = value
		}
	})
	return fields, true
}

// objectEntries returns the entries of raw, a JSON object whose keys are
// its entries' own, key to value, the last value of a key given more than
// once. A missing or null raw gives nil; for one that is no object it
// warns that it must be one, at path, saying what was done (done), and
// returns false.
func (p *parser) objectEntries(raw json.RawMessage, path, done string) (map[string]json.RawMessage, bool) {
	if !isPresent(raw) {
		return nil, true
	}
	if raw[0] != '{' {
		p.warn(SubjectDevice, Refused, path, "must be an object, got %s; %s", p.describe(path, raw), done)
		return nil, false
	}
	entries := make(map[string]json.RawMessage)
	members(raw, func(key []byte, value json.RawMessage) { entries[unquote(key)] = value })
	return entries, true
}
