package pingstatus

import _ "embed" // for the schema

// schema.json is generated from the wire types (wire.go), their doc
// comments and the rules table of internal/schemagen/wireschema; a test
// fails when it is not what the generator writes.
//
//go:generate go run ./internal/schemagen -dir . -o schema.json

//go:embed schema.json
var schema string

// JSONSchema returns the reply format as a JSON Schema (draft 2020-12). A
// reply that the schema accepts is one that [Parse] takes without a warning,
// and the other way round, with field names in any letter case as Parse
// reads them ("Resources", "Cpu"; see "What serializers write"), but for
// what a schema cannot see:
//
//   - keys given more than once, in one letter case or in several (a
//     validator sees one value of a key, or each spelling as a field of its own)
//   - accelerator types listed more than once
//   - taint keys listed more than once with the same effect
//   - quantities too large for a scheduler's int64
//   - quantities written as JSON numbers of more than 64 characters (a
//     schema sees a number's value, not its text)
//   - device groups named more than once (the schema sees each entry on
//     its own)
//   - parts named more than once (the schema sees each entry on its own)
//   - device counts that add up to more than 1024 (a schema cannot add)
//   - devices with more than 32 attributes and capacities together (it
//     bounds each of the two)
//   - attribute strings of at most 64 characters but more than 64 bytes
//     (a schema counts characters)
//   - accelerators other than 0 in a reply that lists devices (a rule of
//     one field that depends on another, each in any letter case)
//   - label keys in namespaces a provider may allow but the default
//     options do not (the schema takes every namespace that
//     [Options.LabelNamespaces] can allow, such as nvidia.com, since a
//     plugin is written for the provider that allows it; Parse with the
//     zero Options takes only feature.node.kubernetes.io and
//     profile.node.kubernetes.io)
//   - unknown keys that look like known fields misspelled or at the wrong
//     level (the schema allows every unknown field, as Parse reads past
//     them; rule key-near-miss warns of "device", "attribute", "capacities", and
//     "devices" under "resources")
//
// It is a little stricter than Parse for:
//
//   - whole numbers in spellings other than the plain ones ("8", "2k", "4Ki",
//     "1e3"), such as "2000m" or "-0"
func JSONSchema() string { return schema }
