// Package jsontree reads a JSON text once, in one pass, into a light
// tree of values, which its reader then walks and never the text again.
// It accepts exactly what encoding/json accepts, and besides, where a
// value may stand, the non-finite numbers that serializers write (NaN,
// Infinity and their kin); it keeps each scalar's token as written and
// each member's key as spelled, repeated keys included, and neither
// decodes nor copies them. It knows nothing of what the text means: a
// reader (package pingstatus) walks the tree by index, and may keep one
// small mark on each node ([Tree.Mark]), such as which field a key names.
package jsontree
