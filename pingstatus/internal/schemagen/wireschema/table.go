package wireschema

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// An Entry is one line of the table: a wire type, with where the schema
// describes it and the rules of each of its fields, or a rule of its own
// in $defs.
type Entry struct {
	// Def is the entry's name in $defs; "" for the reply itself, for the
	// object described at the one field that holds it (resources), and
	// for a struct that others embed, whose fields stand in theirs.
	Def string
	// Type is the wire type; nil for a rule of its own, which Schema is.
	Type reflect.Type
	// Schema is a rule of its own, with its description; for a wire type,
	// the keywords it has besides those the generator derives ($schema,
	// title).
	Schema Schema
	// Note follows the wire type's description.
	Note string
	// Fields are the rules of the wire type's fields, by their Go names:
	// every field has an entry, an empty one if no rule constrains it
	// beyond its Go type.
	Fields map[string]Field
	// AnyOf are the ways an object may be, when it may be in several.
	AnyOf []Alternative
	// ExactlyOne says that exactly one of the object's fields is given
	// and not null (oneOf).
	ExactlyOne bool
}

// A Field is what the rules say of a field beyond what its Go type says.
type Field struct {
	// Types are the JSON types of the field's value where they are not
	// its Go type's: a count is a string or an integer.
	Types []string
	// Refs are the rules in $defs that describe the value, by name
	// ("quantity"), or the field of another entry in $defs that it is
	// alike ("taint.Value"); more than one, all of them (allOf). The
	// field's type is then theirs, without null if it is required.
	Refs []string
	// Items is the $defs entry of a list's entries, when their Go type has
	// more than one (a device's taints are a node's, with rules of their
	// own).
	Items string
	// Schema holds the other keywords: bounds, patterns, enum (with null
	// added for a field that is not required), not, and a map's
	// propertyNames and additionalProperties. A $ref in it names a rule
	// or a field as Refs do.
	Schema
}

// An Alternative is one way an object may be: a schema for some of its
// fields, in any letter case, by their Go names.
type Alternative struct {
	Description string
	Fields      []FieldSchema
}

// A FieldSchema is what one field must be in an [Alternative].
type FieldSchema struct {
	Field  string
	Schema *Schema
}

// Consts are the numbers of pingstatus and kuberules that the table uses
// and that they do not export: [Build] reads them from their source.
type Consts struct {
	MaxQuantityBytes  int // pingstatus's maxQuantityBytes
	MaxHugepageSizes  int // pingstatus's maxHugepageSizes
	MaxSubdomainBytes int // kuberules' maxSubdomainLen: a DNS subdomain, a qualified name's prefix
	MaxNamePartBytes  int // kuberules' maxNameLen: a qualified name's name part
}

// unexported says where each of the [Consts] is: the package, relative
// to pingstatus, and the constant's name.
var unexported = []struct {
	dir, name string
	into      func(*Consts) *int
}{
	{".", "maxQuantityBytes", func(c *Consts) *int { return &c.MaxQuantityBytes }},
	{".", "maxHugepageSizes", func(c *Consts) *int { return &c.MaxHugepageSizes }},
	{"../internal/kuberules", "maxSubdomainLen", func(c *Consts) *int { return &c.MaxSubdomainBytes }},
	{"../internal/kuberules", "maxNameLen", func(c *Consts) *int { return &c.MaxNamePartBytes }},
}

// Table is the one table of what the reply's Go types do not say: for
// each wire type, where the schema describes it, and for each of its
// fields, by Go name, the rules that constrain its value; and the rules
// of their own in $defs, in the order $defs lists them (the wire types
// among them), with their descriptions. The fields' and the types'
// descriptions are their doc comments.
func Table(c Consts) []Entry {
	// Names, as kuberules judges them.
	subdomain := `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`
	name := func(maxBytes int) string { // a qualified name's name part, or a label value
		return `([A-Za-z0-9][-A-Za-z0-9_.]{0,` + strconv.Itoa(maxBytes-2) + `})?[A-Za-z0-9]`
	}
	qualifiedName := `^(` + subdomain + `/)?` + name(c.MaxNamePartBytes) + `$`
	prefixedName := `^` + subdomain + `/` + name(c.MaxNamePartBytes) + `$`
	prefixUpTo := func(maxBytes int) string { return `^[^/]{1,` + strconv.Itoa(maxBytes) + `}/` }
	optionalPrefixUpTo := func(maxBytes int) string { return `^([^/]{1,` + strconv.Itoa(maxBytes) + `}/)?[^/]*$` }
	dnsLabel := `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	requestsPrefix := corev1.DefaultResourceRequestsPrefix
	namespaces := kuberules.DefaultLabelNamespaces[:]

	return []Entry{
		{
			Type: reflect.TypeFor[pingstatus.PingResponse](),
			Schema: Schema{
				Schema: "https://json-schema.org/draft/2020-12/schema",
				ID:     "urn:pingnode:ping-reply:v1",
				Title:  "Plugin reply to a Virtual Kubelet provider's ping",
			},
			Note: "Unknown fields are ignored. A field name matches as Go's encoding/json matches it: exactly, or else in any " +
				"letter case (.NET writes Resources and Cpu), by Unicode simple folding, which also takes U+017F (long s) for s " +
				"and U+212A (Kelvin sign) for k. So each object has, besides its properties, patternProperties that hold every " +
				"spelling of a field's name to that field's schema.",
			Fields: map[string]Field{
				"Status": {},
				"Nodes":  {Schema: Schema{MaxItems: ptr(pingstatus.DefaultMaxParts)}},
			},
			AnyOf: []Alternative{
				{
					Description: "No parts are listed: nodes, in any letter case, is absent or null.",
					Fields:      []FieldSchema{{"Nodes", &Schema{Type: Types{"null"}}}},
				},
				{
					Description: "Beside the parts, resources and devices, in any letter case, are absent or null, and taints and labels, " +
						"every part's, have at most " + strconv.Itoa(pingstatus.MaxShared) + " entries each.",
					Fields: []FieldSchema{
						{"Resources", &Schema{Type: Types{"null"}}},
						{"Devices", &Schema{Type: Types{"null"}}},
						{"Taints", &Schema{MaxItems: ptr(pingstatus.MaxShared)}},
						{"Labels", &Schema{MaxProperties: ptr(pingstatus.MaxShared)}},
					},
				},
			},
		},
		{
			Type: reflect.TypeFor[pingstatus.NodeResponse](),
			Fields: map[string]Field{
				"Resources": {},
				"Taints":    {Items: "taint", Schema: Schema{MaxItems: ptr(pingstatus.DefaultMaxTaints)}},
				"Labels": {Schema: Schema{
					MaxProperties:        ptr(pingstatus.DefaultMaxLabels),
					PropertyNames:        &Schema{Ref: "labelKey"},
					AdditionalProperties: &Schema{Ref: "taint.Value"},
				}},
				"Devices": {Schema: Schema{MaxItems: ptr(pingstatus.DefaultMaxDevices)}},
			},
		},
		{
			Type: reflect.TypeFor[pingstatus.ResourcesResponse](),
			Fields: map[string]Field{
				"CPU":          {Refs: []string{"positiveQuantity"}},
				"Memory":       {Refs: []string{"positiveQuantity"}},
				"Pods":         {Refs: []string{"wholeQuantity", "notZero"}},
				"Accelerators": {Schema: Schema{MaxItems: ptr(pingstatus.DefaultMaxAccelerators)}},
				"Basis": {Schema: Schema{
					Enum: []any{string(pingstatus.BasisAvailable), string(pingstatus.BasisTotal)},
				}},
				"EphemeralStorage": {Refs: []string{"positiveQuantity"}},
				"Hugepages": {Schema: Schema{
					MaxProperties:        ptr(c.MaxHugepageSizes),
					PropertyNames:        &Schema{Ref: "pageSize"},
					AdditionalProperties: &Schema{Ref: "quantity"},
				}},
			},
		},
		{
			Def:  "part",
			Type: reflect.TypeFor[pingstatus.PartResponse](),
			Fields: map[string]Field{
				"Name": {Schema: Schema{MaxLength: ptr(kuberules.MaxPartNameBytes), Pattern: dnsLabel}},
			},
		},
		{
			Def: "quantity",
			Schema: Schema{
				Description: "A non-negative Kubernetes quantity, as a string or a number; null means no news.",
				Type:        Types{"string", "number", "null"},
				Pattern:     `^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)([numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]+)?$`,
				MaxLength:   ptr(c.MaxQuantityBytes),
				Minimum:     ptr[int64](0),
			},
		},
		{
			Def: "notZero",
			Schema: Schema{
				Description: "Not zero: a provider refuses 0 for cpu, memory and pods, which would drain the node.",
				Not: &Schema{
					Type:    Types{"string", "number"},
					Pattern: `^\+?(0+(\.0*)?|\.0+)([numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]+)?$`,
					Maximum: ptr[int64](0),
				},
			},
		},
		{
			Def:    "positiveQuantity",
			Schema: Schema{AllOf: []*Schema{{Ref: "quantity"}, {Ref: "notZero"}}},
		},
		{
			Def: "wholeQuantity",
			Schema: Schema{
				Description: "A non-negative whole number, as a string or a JSON integer; null means no news.",
				Type:        Types{"string", "integer", "null"},
				Pattern:     `^\+?[0-9]+([kMGTPE]|[KMGTPE]i|[eE]\+?[0-9]+)?$`,
				MaxLength:   ptr(c.MaxQuantityBytes),
				Minimum:     ptr[int64](0),
			},
		},
		{
			Def:  "accelerator",
			Type: reflect.TypeFor[pingstatus.AcceleratorResponse](),
			Fields: map[string]Field{
				// An extended resource name: a qualified name with "requests."
				// before it, as resource quotas write it.
				"ResourceType": {Schema: Schema{
					MaxLength: ptr(kuberules.MaxNameBytes),
					Pattern:   prefixedName,
					AllOf:     []*Schema{{Pattern: prefixUpTo(c.MaxSubdomainBytes - len(requestsPrefix))}},
					Not:       &Schema{Pattern: `(` + regexp.QuoteMeta(corev1.ResourceDefaultNamespacePrefix) + `|^` + regexp.QuoteMeta(requestsPrefix) + `)`},
				}},
				"Available": {Refs: []string{"wholeQuantity"}},
			},
		},
		{
			Def: "pageSize",
			Schema: Schema{
				Description: "A page size as the kubelet writes it: a power of two below 1024 followed by Ki, Mi or Gi.",
				Type:        Types{"string"},
				Pattern:     `^(1|2|4|8|16|32|64|128|256|512)(Ki|Mi|Gi)$`,
			},
		},
		{
			Def: "labelKey",
			Schema: Schema{
				Description: "A label key a plugin may set: a qualified name with a prefix of at most " + strconv.Itoa(c.MaxSubdomainBytes) +
					" characters, not in kubernetes.io, k8s.io or their subdomains, but for " + strings.Join(namespaces, " and ") + " and theirs.",
				Type:      Types{"string"},
				MaxLength: ptr(kuberules.MaxNameBytes),
				Pattern:   prefixedName,
				AllOf:     []*Schema{{Pattern: prefixUpTo(c.MaxSubdomainBytes)}},
				Not: &Schema{AllOf: []*Schema{
					{Pattern: `^([^/]*\.)?(kubernetes|k8s)\.io/`},
					{Not: &Schema{Pattern: `^([^/]*\.)?` + suffixed(namespaces...) + `/`}},
				}},
			},
		},
		{
			Def:  "taint",
			Type: reflect.TypeFor[pingstatus.TaintResponse](),
			Fields: map[string]Field{
				"Key": {Schema: Schema{
					MaxLength: ptr(kuberules.MaxNameBytes),
					Pattern:   qualifiedName,
					AllOf:     []*Schema{{Pattern: optionalPrefixUpTo(c.MaxSubdomainBytes)}},
					// kuberules.IsReservedKey and IsProtectedKey.
					Not: &Schema{AnyOf: []*Schema{
						{Pattern: `^(node\.kubernetes\.io|node\.cloudprovider\.kubernetes\.io|node-role\.kubernetes\.io)/`},
						{Pattern: `^` + prefixed(kuberules.UnreachableTaintKey, kuberules.PartGoneTaintKey, kuberules.BackendFullTaintKey) + `$`},
						{Const: kuberules.DefaultProtectedKey},
					}},
				}},
				"Value": {Schema: Schema{Pattern: `^(` + name(kuberules.MaxValueBytes) + `)?$`}},
				"Effect": {Schema: Schema{Enum: []any{
					string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute),
				}}},
			},
		},
		{
			Def:  "deviceGroup",
			Type: reflect.TypeFor[pingstatus.DeviceResponse](),
			Fields: map[string]Field{
				"Name": {Schema: Schema{MaxLength: ptr(kuberules.MaxDeviceGroupNameBytes), Pattern: dnsLabel}},
				"Count": {Types: []string{"string", "integer"}, Schema: Schema{
					Minimum:   ptr[int64](0),
					Maximum:   ptr[int64](pingstatus.DefaultMaxDevices),
					MaxLength: ptr(c.MaxQuantityBytes),
					Pattern:   wholeUpTo(pingstatus.DefaultMaxDevices),
				}},
				"Attributes": {Schema: Schema{
					MaxProperties: ptr(kuberules.MaxDeviceAttributesAndCapacities),
					PropertyNames: &Schema{Ref: "deviceAttributeName"},
				}},
				"Capacity": {Schema: Schema{
					MaxProperties: ptr(kuberules.MaxDeviceAttributesAndCapacities),
					PropertyNames: &Schema{Ref: "deviceAttributeName"},
				}},
				"Taints": {Items: "deviceTaint", Schema: Schema{MaxItems: ptr(kuberules.MaxDeviceTaints)}},
			},
		},
		{
			Def:  "deviceTaint",
			Type: reflect.TypeFor[pingstatus.TaintResponse](),
			Fields: map[string]Field{
				"Key": {Schema: Schema{
					MaxLength: ptr(kuberules.MaxNameBytes),
					Pattern:   qualifiedName,
					AllOf:     []*Schema{{Pattern: optionalPrefixUpTo(c.MaxSubdomainBytes)}},
				}},
				"Value": {Refs: []string{"taint.Value"}},
				"Effect": {Schema: Schema{Enum: []any{
					string(pingstatus.DeviceTaintNone), string(pingstatus.DeviceTaintNoSchedule), string(pingstatus.DeviceTaintNoExecute),
				}}},
			},
		},
		{
			Def: "deviceAttributeName",
			Schema: Schema{
				Description: fmt.Sprintf("An attribute or capacity name: a C identifier of at most %d characters (productName), "+
					"which Kubernetes reads as in the driver's domain, or a lowercase DNS subdomain of at most %d characters, / and "+
					"such an identifier (gpu.nvidia.com/productName).", kuberules.MaxDeviceAttributeIDBytes, kuberules.MaxDeviceAttributeDomainBytes),
				Type:    Types{"string"},
				Pattern: `^(` + subdomain + `/)?[A-Za-z_][A-Za-z0-9_]{0,` + strconv.Itoa(kuberules.MaxDeviceAttributeIDBytes-1) + `}$`,
				AllOf:   []*Schema{{Pattern: optionalPrefixUpTo(kuberules.MaxDeviceAttributeDomainBytes)}},
			},
		},
		{
			Def:        "deviceAttribute",
			Type:       reflect.TypeFor[pingstatus.DeviceAttribute](),
			ExactlyOne: true,
			Fields: map[string]Field{
				"IntValue":    {Schema: Schema{Minimum: ptr[int64](math.MinInt64), Maximum: ptr[int64](math.MaxInt64)}},
				"BoolValue":   {},
				"StringValue": {Schema: Schema{MaxLength: ptr(kuberules.MaxDeviceAttributeValueBytes)}},
				"VersionValue": {Schema: Schema{
					MaxLength: ptr(kuberules.MaxDeviceAttributeValueBytes),
					Pattern: `^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
						`(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
						`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`,
				}},
			},
		},
		{
			Def:  "deviceCapacity",
			Type: reflect.TypeFor[pingstatus.DeviceCapacity](),
			Fields: map[string]Field{
				"Value": {Refs: []string{"quantity"}},
			},
		},
	}
}
