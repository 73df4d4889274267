package pingstatus

import _ "embed" // for the schema

//go:embed schema.json
var schema string

// JSONSchema returns the reply format as a JSON Schema (draft 2020-12). A reply
// that the schema accepts is one that [Parse] takes without a warning, but
// for what a schema cannot state: repeated accelerator types, repeated taint
// (key, effect) pairs, quantities too large for a scheduler's int64, and
// domain prefixes longer than 253 characters. For whole numbers it is a
// little stricter than Parse: it knows only the plain spellings ("8", "2k",
// "4Ki", "1e3"), not "2000m".
func JSONSchema() string { return schema }
