package grammars

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// Facts are what the product's Go files do with settings, beyond the
// literals they spell: the struct tags they declare, the environment
// they read, the values they compare, the regions and timeouts they
// decide, the patterns they compile. The guard of exporter's
// grammar_test.go holds them to "only the destination describes where
// the data lives".
type Facts struct {
	// EnvTags are the env names of struct tags (Name), with the field
	// they tag (Value).
	EnvTags []Fact
	// FlagTags are the flag names of struct tags.
	FlagTags []Fact
	// Fields are the names of every field (and parameter) declared.
	Fields []Fact
	// Getenv are calls of os.Getenv, os.LookupEnv, syscall.Getenv and
	// os.Environ; Name is the argument as a constant, "" when it is not
	// one (os.Environ reads every variable).
	Getenv []Fact
	// Checks are fields compared with something else than their zero
	// value ("", 0, nil), switched on, or passed to a function that tells
	// values apart (isCheck): Name is the field (opts.PartSize < x:
	// "PartSize"), Value the function.
	Checks []Fact
	// Deciders are functions whose name says they pick a region or a
	// timeout, and calls of cmp.Or, max or min that choose among two or
	// more region or timeout fields (cmp.Or(a.Region, b.Region)).
	Deciders []Fact
	// Compiles are regexp compilations of "^" + <the region pattern> + "$".
	Compiles []Fact
	// OptionsFields are the keys of every s3store.Options literal, by
	// file, with Name the key and Value "setting" when its value reads
	// the receiver's fields (the destination's settings).
	OptionsFields []Fact
}

// Fact is one finding, in File (from the root, with slashes) at Line.
type Fact struct {
	File, Name, Value string
	Line              int
}

// ProductFacts gathers the Facts of the product's Go files under root,
// the files ProductLiterals reads.
func ProductFacts(root string) (*Facts, error) {
	fx := &Facts{}
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
		fx.add(fset, rel, f)
		return nil
	})
	return fx, err
}

func (fx *Facts) add(fset *token.FileSet, file string, f *ast.File) {
	at := func(n ast.Node, name, value string) Fact {
		return Fact{File: file, Name: name, Value: value, Line: fset.Position(n.Pos()).Line}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			for _, id := range n.Names {
				fx.Fields = append(fx.Fields, at(n, id.Name, ""))
			}
			if n.Tag != nil {
				if tag, err := strconv.Unquote(n.Tag.Value); err == nil {
					if env := lookupTag(tag, "env"); env != "" && len(n.Names) == 1 {
						fx.EnvTags = append(fx.EnvTags, at(n, env, n.Names[0].Name))
					}
					if fl := lookupTag(tag, "flag"); fl != "" {
						fx.FlagTags = append(fx.FlagTags, at(n, fl, ""))
					}
				}
			}
		case *ast.CallExpr:
			fx.call(at, n)
		case *ast.BinaryExpr:
			switch n.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
					if sel := field(pair[0]); sel != "" && !isZero(pair[1]) {
						fx.Checks = append(fx.Checks, at(n, sel, ""))
					}
				}
			}
		case *ast.SwitchStmt:
			if sel := field(n.Tag); sel != "" {
				fx.Checks = append(fx.Checks, at(n, sel, ""))
			}
		case *ast.FuncDecl:
			if decides(n) {
				fx.Deciders = append(fx.Deciders, at(n, n.Name.Name, "func"))
			}
			if n.Recv != nil && len(n.Recv.List) == 1 && len(n.Recv.List[0].Names) == 1 {
				fx.optionsLiterals(at, n.Body, n.Recv.List[0].Names[0].Name)
			}
		}
		return true
	})
}

// call records lookups, choices among region or timeout fields, checks
// passed to a function, and compilations of the region pattern.
func (fx *Facts) call(at func(ast.Node, string, string) Fact, n *ast.CallExpr) {
	name := callee(n.Fun)
	switch name {
	case "os.Getenv", "os.LookupEnv", "syscall.Getenv", "os.Environ", "syscall.Environ":
		v := ""
		if len(n.Args) == 1 {
			v, _ = constant(n.Args[0])
		}
		fx.Getenv = append(fx.Getenv, at(n, v, name))
	case "regexp.MustCompile", "regexp.Compile":
		if len(n.Args) == 1 && compilesRegion(n.Args[0]) {
			fx.Compiles = append(fx.Compiles, at(n, name, ""))
		}
	}
	chosen := 0
	for _, a := range n.Args {
		if f := field(a); strings.HasSuffix(f, "Region") || strings.HasSuffix(f, "Timeout") {
			chosen++
		}
	}
	if chosen >= 2 && (name == "cmp.Or" || name == "max" || name == "min") {
		fx.Deciders = append(fx.Deciders, at(n, name, "call"))
	}
	if isCheck(name) {
		for _, a := range n.Args {
			if f := field(a); f != "" {
				fx.Checks = append(fx.Checks, at(n, f, name))
			}
		}
	}
}

// isCheck reports a function that tells a value apart: a membership,
// a pattern, a validation.
func isCheck(name string) bool {
	for _, w := range []string{"Contains", "Match", "HasPrefix", "HasSuffix", "EqualFold", "Problem", "Valid", "valid", "check", "Check"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// optionsLiterals records the keys of the s3store.Options literals in a
// method's body; a key whose value reads the receiver carries a setting.
func (fx *Facts) optionsLiterals(at func(ast.Node, string, string) Fact, body *ast.BlockStmt, recv string) {
	if body == nil {
		return
	}
	ast.Inspect(body, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok || callee(cl.Type) != "s3store.Options" {
			return true
		}
		for _, e := range cl.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			key, isIdent := kv.Key.(*ast.Ident)
			if !ok || !isIdent {
				continue
			}
			v := ""
			ast.Inspect(kv.Value, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && id.Name == recv {
					v = "setting"
				}
				return true
			})
			fx.OptionsFields = append(fx.OptionsFields, at(kv, key.Name, v))
		}
		return true
	})
}

// decides reports a function named for a region or a timeout it picks
// (SecretRegion, BucketRegion, RequestTimeout), not a predicate.
func decides(fd *ast.FuncDecl) bool {
	n := fd.Name.Name
	if !strings.HasSuffix(n, "Region") && !strings.HasSuffix(n, "Timeout") {
		return false
	}
	res := fd.Type.Results
	if res == nil || len(res.List) != 1 {
		return false
	}
	id, ok := res.List[0].Type.(*ast.Ident)
	return !ok || id.Name != "bool"
}

// compilesRegion reports "^" + <RegionPattern> + "$".
func compilesRegion(e ast.Expr) bool {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok || b.Op != token.ADD {
		return false
	}
	end, okEnd := constant(b.Y)
	l, okL := ast.Unparen(b.X).(*ast.BinaryExpr)
	if !okEnd || end != "$" || !okL || l.Op != token.ADD {
		return false
	}
	start, okStart := constant(l.X)
	mid := callee(l.Y)
	return okStart && start == "^" && (strings.HasSuffix(mid, "RegionPattern") || mid == "regionPattern")
}

// field is the field a selector names (opts.PartSize: "PartSize"), ""
// for anything else.
func field(e ast.Expr) string {
	if e == nil {
		return ""
	}
	if sel, ok := ast.Unparen(e).(*ast.SelectorExpr); ok {
		if _, isPkg := sel.X.(*ast.Ident); isPkg && ast.IsExported(sel.Sel.Name) && isPackageName(sel.X.(*ast.Ident).Name) {
			return ""
		}
		return sel.Sel.Name
	}
	return ""
}

// isPackageName guesses a package qualifier: the product names its
// variables in lower camel case too, so only the packages a check would
// reach for are taken for packages.
func isPackageName(s string) bool {
	switch s {
	case "s3store", "exporter", "types", "time", "strings", "slices", "destination", "awsauth", "http", "os", "fmt", "errors":
		return true
	}
	return false
}

func isZero(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return e.Value == `""` || e.Value == "``" || e.Value == "0"
	case *ast.Ident:
		return e.Name == "nil"
	}
	return false
}

// callee is a call's function as written, "pkg.Name" or "Name"; "" for
// anything else.
func callee(e ast.Expr) string {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
		return e.Sel.Name
	}
	return ""
}

// constant is the value of a string literal or a concatenation of them.
func constant(e ast.Expr) (string, bool) { return folded(e) }

func lookupTag(tag, key string) string { return reflect.StructTag(tag).Get(key) }
