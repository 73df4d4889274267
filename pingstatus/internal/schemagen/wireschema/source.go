package wireschema

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A source is a package's Go files (its tests left out), parsed with
// their comments.
type source struct {
	fset  *token.FileSet
	files []*ast.File
}

// parseDir parses the Go files of the package in dir.
func parseDir(dir string) (*source, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	src := &source{fset: token.NewFileSet()}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(src.fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		src.files = append(src.files, f)
	}
	if len(src.files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	return src, nil
}

// intConst returns the value of the package-level constant name, which
// must be an integer written with literals and other such constants of
// the package: how the generator reads a number that the package does
// not export.
func (src *source) intConst(name string) (int, error) {
	specs := make(map[string]ast.Expr)
	for _, f := range src.files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						specs[id.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	var eval func(e ast.Expr, depth int) (constant.Value, error)
	eval = func(e ast.Expr, depth int) (constant.Value, error) {
		if depth > 10 {
			return nil, fmt.Errorf("constant %s: too deep", name)
		}
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind == token.INT {
				return constant.MakeFromLiteral(e.Value, e.Kind, 0), nil
			}
		case *ast.ParenExpr:
			return eval(e.X, depth+1)
		case *ast.Ident:
			if x, ok := specs[e.Name]; ok {
				return eval(x, depth+1)
			}
		case *ast.BinaryExpr:
			x, err := eval(e.X, depth+1)
			if err != nil {
				return nil, err
			}
			y, err := eval(e.Y, depth+1)
			if err != nil {
				return nil, err
			}
			switch e.Op {
			case token.ADD, token.SUB, token.MUL:
				return constant.BinaryOp(x, e.Op, y), nil
			case token.SHL:
				n, _ := constant.Uint64Val(y)
				return constant.Shift(x, e.Op, uint(n)), nil
			}
		}
		return nil, fmt.Errorf("constant %s is not an integer of literals (%T)", name, e)
	}
	x, ok := specs[name]
	if !ok {
		return 0, fmt.Errorf("no constant %s", name)
	}
	v, err := eval(x, 0)
	if err != nil {
		return 0, err
	}
	n, ok := constant.Int64Val(v)
	if !ok {
		return 0, fmt.Errorf("constant %s is not an int64", name)
	}
	return int(n), nil
}

// docs are the doc comments of the types of a package and of their
// fields, from which the descriptions come (the convention is at the top
// of wire.go): the first paragraph of each, its doc links written as
// plain text, without its leading "Name is" or "Name are", which the
// description does not need. Later paragraphs are for Go alone, and left
// out.
type docs struct {
	parser *comment.Parser
	types  map[string]string            // a type's doc comment, by its name
	fields map[string]map[string]string // a field's doc comment, by its type's name and its own
}

// readDocs reads the doc comments of the types of the package in src,
// whose import path is importPath (for its doc links).
func readDocs(src *source, importPath string) (*docs, error) {
	pkg, err := doc.NewFromFiles(src.fset, src.files, importPath, doc.PreserveAST)
	if err != nil {
		return nil, err
	}
	d := &docs{parser: pkg.Parser(), types: make(map[string]string), fields: make(map[string]map[string]string)}
	for _, t := range pkg.Types {
		d.types[t.Name] = t.Doc
		for _, spec := range t.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != t.Name {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			fields := make(map[string]string)
			for _, f := range st.Fields.List {
				for _, n := range f.Names {
					fields[n.Name] = f.Doc.Text()
				}
			}
			d.fields[t.Name] = fields
		}
	}
	return d, nil
}

// typeDescription returns the description of the type name.
func (d *docs) typeDescription(name string) (string, error) {
	text, ok := d.types[name]
	if !ok {
		return "", fmt.Errorf("type %s: not in the source", name)
	}
	desc, err := description(d.parser, name, text)
	if err != nil {
		return "", fmt.Errorf("type %s: %w", name, err)
	}
	return desc, nil
}

// fieldDescription returns the description of the field of the type
// typeName.
func (d *docs) fieldDescription(typeName, field string) (string, error) {
	text, ok := d.fields[typeName][field]
	if !ok {
		return "", fmt.Errorf("field %s.%s: not in the source", typeName, field)
	}
	desc, err := description(d.parser, field, text)
	if err != nil {
		return "", fmt.Errorf("field %s.%s: %w", typeName, field, err)
	}
	return desc, nil
}

// description returns the description that the doc comment text of the
// type or field name gives, or "" for none, and an error if the comment
// does not start as the convention says.
func description(p *comment.Parser, name, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("no doc comment: its first paragraph is its description in the schema")
	}
	parsed := p.Parse(text)
	para, ok := parsed.Content[0].(*comment.Paragraph)
	if !ok {
		return "", fmt.Errorf("its doc comment does not start with a paragraph")
	}
	pr := &comment.Printer{TextWidth: -1}
	first := strings.TrimSpace(string(pr.Text(&comment.Doc{Content: []comment.Block{para}})))
	for _, verb := range []string{" is ", " are "} {
		if rest, ok := strings.CutPrefix(first, name+verb); ok {
			r, size := utf8.DecodeRuneInString(rest)
			return string(unicode.ToUpper(r)) + rest[size:], nil
		}
	}
	return "", fmt.Errorf("its doc comment starts %q, not %q or %q: the schema's description is the first paragraph without it",
		cut(first, len(name)+12), name+" is", name+" are")
}

// cut returns s cut after n bytes, marked with "...".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
