package grammars

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// Literal is one string literal of the product's Go code.
type Literal struct {
	File  string // from the repository root, with slashes
	Value string // unquoted
	// Compared: an operand of == or != or a case of a switch, where a
	// value is told apart, as a flavour name is.
	Compared bool
	// Tag: a struct tag, a table of settings that tests hold to the
	// definitions by what it means, not by its spelling.
	Tag bool
	// Arg: the one argument of a call, f("CLUSTER_ARNS"), as a lookup
	// reads a variable.
	Arg bool
	// Operand: a piece of a concatenation ("S3_" + name), a name built
	// at run time. A concatenation of literals alone ("S3_" + "PREFIX")
	// is also a Literal of its own, folded, as the compiler folds it.
	Operand bool
}

// ProductLiterals returns every string literal of the product's Go files
// under root: not tests, and not the test tooling (internal/testkit,
// internal/bench), which imitates Kubecost and AWS on purpose.
func ProductLiterals(root string) ([]Literal, error) {
	var out []Literal
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "internal/testkit" || rel == "internal/bench" || (rel != "." && strings.HasPrefix(d.Name(), ".")) || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, literalsOf(rel, f)...)
		return nil
	})
	return out, err
}

func literalsOf(file string, f *ast.File) []Literal {
	compared, tags, args, operands := map[ast.Expr]bool{}, map[ast.Expr]bool{}, map[ast.Expr]bool{}, map[ast.Expr]bool{}
	var out []Literal
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				compared[n.X], compared[n.Y] = true, true
			}
			if n.Op == token.ADD {
				operands[ast.Unparen(n.X)], operands[ast.Unparen(n.Y)] = true, true
				if s, ok := folded(n); ok {
					out = append(out, Literal{File: file, Value: s, Compared: compared[n], Arg: args[n]})
				}
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				compared[e] = true
			}
		case *ast.CallExpr:
			if len(n.Args) == 1 {
				args[n.Args[0]] = true
			}
		case *ast.Field:
			if n.Tag != nil {
				tags[n.Tag] = true
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
				out = append(out, Literal{File: file, Value: s, Compared: compared[n], Tag: tags[n], Arg: args[n], Operand: operands[n]})
			}
		}
		return true
	})
	return out
}

// folded is the value of a concatenation of string literals.
func folded(e ast.Expr) (string, bool) {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		return s, err == nil && e.Kind == token.STRING
	case *ast.BinaryExpr:
		x, okx := folded(e.X)
		y, oky := folded(e.Y)
		return x + y, okx && oky && e.Op == token.ADD
	}
	return "", false
}
