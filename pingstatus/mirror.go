package pingstatus

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The decode's mirrors of the wire types: what json.Unmarshal fills in the
// fast path, and the field-by-field decode by hand, for the rules to read.
// They keep a value's text where the wire types would lose it (a quantity,
// a number), "absent" apart from "[]", and what the field-by-field decode
// found and warned about.

// reply mirrors PingResponse for decoding: quantities may be JSON strings or
// numbers, and taints keep "absent" apart from "[]".
type reply struct {
	Status    string     `json:"status"`
	Resources *resources `json:"resources"`
	Taints    *[]taint   `json:"taints"`
	// Labels is nil when absent or null; {} gives an empty map. A null
	// value reads as "", as a taint's does.
	Labels map[string]string `json:"labels"`
	// Devices is nil when absent or null.
	Devices *[]device `json:"devices"`
}

type resources struct {
	CPU              quantity            `json:"cpu"`
	Memory           quantity            `json:"memory"`
	Pods             quantity            `json:"pods"`
	Accelerators     []accelerator       `json:"accelerators"`
	Basis            *string             `json:"basis"`
	EphemeralStorage quantity            `json:"ephemeralStorage"`
	Hugepages        map[string]quantity `json:"hugepages"`
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

// device is an entry of the devices list. Null and absent fields are
// unset: Name nil, Count not set.
type device struct {
	Name       *string                    `json:"name"`
	Count      quantity                   `json:"count"`
	Attributes map[string]deviceAttribute `json:"attributes"`
	Capacity   map[string]deviceCapacity  `json:"capacity"`
	Taints     []deviceTaint              `json:"taints"`
	// What the field-by-field decode found, and warned about.
	dropped     bool // the entry is no object, or its name no string
	countWarned bool // the count is neither a string nor a number
	refused     bool // attributes or capacity are not objects, or taints no array
	overLimit   int  // this many attributes and capacities, counted, not decoded
	taintsOver  int  // this many taints, more than a device may have, counted, not decoded
}

// deviceAttribute is a device attribute's value; null and absent fields
// are unset.
type deviceAttribute struct {
	Int     number  `json:"int"`
	Bool    *bool   `json:"bool"`
	String  *string `json:"string"`
	Version *string `json:"version"`
	warned  bool    // by the field-by-field decode: a field of the wrong type
}

// deviceCapacity is a device's capacity. warned is set by the
// field-by-field decode (not an object, or a value of the wrong type)
// and by the reading of the value (missing, or no quantity), each with
// its warning.
type deviceCapacity struct {
	Value  quantity `json:"value"`
	warned bool
}

// deviceTaint is a taint of a device entry; a null or absent field is
// "", as for a taint of the node.
type deviceTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
	warned bool   // by the field-by-field decode: not an object, or a field of the wrong type
}

// number is the text of a JSON number; null and absent leave it unset.
type number struct {
	text string
	set  bool
}

func (n *number) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*n = number{}
		return nil
	case b[0] == '-' || '0' <= b[0] && b[0] <= '9':
		*n = number{text: string(b), set: true}
		return nil
	}
	return errNotNumber
}

var errNotNumber = errors.New("a JSON number is needed")

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
