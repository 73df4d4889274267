// Package contracts reads the rules of the library's contracts. Each
// package whose documentation is a contract lists its rules, each under
// a name that does not change when another rule is added: a list item
// that starts with the name and a colon,
//
//	//   - taint-unique: Taints are unique by key and effect ...
//
// A name is words of lowercase letters and digits joined by hyphens, at
// least two, so that a citation of it ("rule taint-unique", "rules
// part-fields and part-no-sum") can be told from prose; names are unique
// across the contracts, so that a citation needs no package. A warning
// carries the name of the rule that gave it (pingstatus.Warning.Rule).
package contracts

import (
	"regexp"
)

// Files are the package comments that state the contracts, from the
// module's root.
var Files = [...]string{
	"pingstatus/doc.go",
	"nodeapply/doc.go",
	"nodeapply/devicepool/doc.go",
	"nodeapply/parts/doc.go",
	"nodeapply/dra/confirm/doc.go",
}

// name is the form of a rule's name.
const name = `[a-z0-9]+(?:-[a-z0-9]+)+`

// declaration is a rule's list item in a package comment.
var declaration = regexp.MustCompile(`(?m)^//   - (` + name + `): `)

// Names returns the names of the rules that src, a package comment's
// source, declares, in their order.
func Names(src []byte) []string {
	var names []string
	for _, m := range declaration.FindAllSubmatch(src, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// sep is what may stand between the words of a citation: spaces, and
// the comment markers of a line that breaks it.
const sep = `[\s/]+`

// citation is a citation of one rule or more: "rule taint-unique",
// "rules part-entries, part-fields and part-no-sum", "rules
// `condition-set` to `condition-others`", across the line breaks of a
// comment.
var citation = regexp.MustCompile(`\b[Rr]ules?` + sep + `(` + cited + `(?:(?:,` + sep + `(?:and` + sep + `|or` + sep + `|to` + sep + `)?|` + sep + `(?:and|or|to)` + sep + `)` + cited + `)*)`)

// cited is a name as a citation writes it: as it is, or in backquotes (as
// README writes code).
const cited = "`?" + name + "`?"

// citedName is a name within a citation.
var citedName = regexp.MustCompile(name)

// numbered is a citation of a rule by number, which no contract has.
var numbered = regexp.MustCompile(`\b[Rr]ules?` + sep + `[0-9]+\b`)

// Citations returns the names of the rules that text cites, each with
// its byte offset in text, in order, and the offsets of citations by
// number.
func Citations(text []byte) (names []Cited, byNumber []int) {
	for _, m := range citation.FindAllSubmatchIndex(text, -1) {
		list := text[m[2]:m[3]]
		for _, n := range citedName.FindAllIndex(list, -1) {
			names = append(names, Cited{Name: string(list[n[0]:n[1]]), Offset: m[2] + n[0]})
		}
	}
	for _, m := range numbered.FindAllIndex(text, -1) {
		byNumber = append(byNumber, m[0])
	}
	return names, byNumber
}

// Cited is one name that a citation names, at its byte offset.
type Cited struct {
	Name   string
	Offset int
}
