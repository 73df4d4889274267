package nodeapply

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/pingnode/pingnode/internal/contracts"
)

// TestRuleNamesAreTheContracts: each name that a warning of Apply
// carries is a rule of the package comment.
func TestRuleNamesAreTheContracts(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := contracts.Names(doc)
	f, err := parser.ParseFile(token.NewFileSet(), "rulenames.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		v, ok := node.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i := range v.Names {
			name, _ := strconv.Unquote(v.Values[i].(*ast.BasicLit).Value)
			n++
			if !slices.Contains(declared, name) {
				t.Errorf("rulenames.go names %q, which doc.go does not declare (it declares %v)", name, declared)
			}
		}
		return true
	})
	if n == 0 {
		t.Error("rulenames.go names no rule")
	}
}
