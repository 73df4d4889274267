package pingstatus

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/internal/contracts"
)

// ruleConstants returns the values of the string constants of file whose
// names start with "rule", in their order.
func ruleConstants(t *testing.T, file string) []string {
	t.Helper()
	f, err := goparser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			for i, id := range v.Names {
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && len(id.Name) > 4 && id.Name[:4] == "rule" {
					s, _ := strconv.Unquote(lit.Value)
					names = append(names, s)
				}
			}
		}
	}
	return names
}

// TestRuleNamesAreTheContracts: the names the warnings carry are those
// of the package comment's rules, each once, and each rule has one.
func TestRuleNamesAreTheContracts(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := contracts.Names(doc)
	constants := ruleConstants(t, "rulenames.go")
	slices.Sort(declared)
	slices.Sort(constants)
	if diff := cmp.Diff(declared, constants); diff != "" {
		t.Errorf("the rules of doc.go (-) and the constants of rulenames.go (+):\n%s", diff)
	}
}
