package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const root = "../.."

// TestArchitectureMapIsTrue reads docs/architecture.md and checks its
// content, not only its names: every Go package of the module has a row
// in the tree of "Where each part lives"; every tree row is a directory
// that exists; every Go file it names exists; and every `pkg.Name` or
// `pkg.Type.Method` it names is declared in that package.
func TestArchitectureMapIsTrue(t *testing.T) {
	doc := readDoc(t)
	pkgs := packages(t)
	rows := treeRows(t, doc)
	dirs := make([]string, 0, len(pkgs))
	for dir := range pkgs {
		dirs = append(dirs, dir)
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		if !slices.Contains(rows, dir) {
			t.Errorf("docs/architecture.md has no row for package %s", dir)
		}
	}
	for _, r := range rows {
		if fi, err := os.Stat(filepath.Join(root, r)); err != nil || !fi.IsDir() {
			t.Errorf("docs/architecture.md has a row for %s, which is not a directory", r)
		}
	}
	for _, f := range goFiles(doc) {
		if !fileExists(t, f) {
			t.Errorf("docs/architecture.md names %s, which does not exist", f)
		}
	}
	for _, id := range identifiers(doc, pkgs) {
		if !declared(pkgs, id) {
			t.Errorf("docs/architecture.md names %s, which is not declared", id)
		}
	}
}

// TestArchitectureCheckFails: the checks catch a removed identifier, a
// missing file and a package without a row.
func TestArchitectureCheckFails(t *testing.T) {
	pkgs := packages(t)
	if declared(pkgs, "kubecost.HeadersFile") || !declared(pkgs, "exporter.ParseHeaders") || !declared(pkgs, "destination.Settings") {
		t.Error("declared does not tell a removed identifier from a present one")
	}
	if fileExists(t, "exporter/no_such_file.go") || !fileExists(t, "filemap.go") {
		t.Error("fileExists does not tell a missing file from a present one")
	}
	rows := treeRows(t, "## Where each part lives\n```\n.\n├── exporter/\n│   └── bill/\n└── docs/\n```\n")
	if !slices.Equal(rows, []string{"exporter", "exporter/bill", "docs"}) {
		t.Errorf("treeRows = %v", rows)
	}
	ids := identifiers("`kubecost.HeadersFile` and `config.send_content_md5` and `Layout.Key` and `config.go`", pkgs)
	if !slices.Equal(ids, []string{"kubecost.HeadersFile"}) {
		t.Errorf("identifiers = %v", ids)
	}
}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// packages maps each directory holding Go files (relative to the root,
// testdata and hidden directories aside) to its declarations: "Name" for
// top-level names, "Type.Method" for methods and "Type.Field" for struct
// fields.
func packages(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					out[rel][recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
				} else {
					out[rel][d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[rel][s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									out[rel][s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[rel][n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

var treeLine = regexp.MustCompile(`^((?:│   |    )*)[├└]── ([^ ]+)`)

// treeRows are the directories of the tree under "Where each part
// lives", as paths from the root.
func treeRows(t *testing.T, doc string) []string {
	t.Helper()
	i := strings.Index(doc, "## Where each part lives")
	if i < 0 {
		t.Fatal("no \"Where each part lives\" section")
	}
	block := doc[i:]
	start := strings.Index(block, "```\n")
	end := strings.Index(block[start+4:], "```")
	if start < 0 || end < 0 {
		t.Fatal("no tree in \"Where each part lives\"")
	}
	var rows, stack []string
	for _, line := range strings.Split(block[start+4:start+4+end], "\n") {
		m := treeLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		depth := len([]rune(m[1])) / 4
		stack = append(stack[:min(depth, len(stack))], strings.TrimSuffix(m[2], "/"))
		rows = append(rows, strings.Join(stack, "/"))
	}
	return rows
}

var goFile = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_]\.go\b`)

// goFiles are the Go file names the text mentions.
func goFiles(doc string) []string {
	var out []string
	for _, f := range goFile.FindAllString(doc, -1) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// fileExists: a path with a directory exists from the root; a bare name
// exists somewhere in the repository.
func fileExists(t *testing.T, name string) bool {
	t.Helper()
	if strings.Contains(name, "/") {
		_, err := os.Stat(filepath.Join(root, name))
		return err == nil
	}
	found := false
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipAll
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		found = d.Name() == name
		return nil
	})
	return found
}

var qualified = regexp.MustCompile("`\\(?\\*?([a-z][a-z0-9]*)\\.([A-Za-z][A-Za-z0-9]*(?:\\.[A-Za-z][A-Za-z0-9]*)?)\\)?")

// identifiers are the backticked pkg.Name and pkg.Type.Member of the text
// whose pkg is the last element of a package of the module; YAML keys
// (config.send_content_md5) and file names (config.go) are left out.
func identifiers(doc string, pkgs map[string]map[string]bool) []string {
	names := map[string]bool{}
	for dir := range pkgs {
		names[filepath.Base(dir)] = true
	}
	var out []string
	for _, m := range qualified.FindAllStringSubmatchIndex(doc, -1) {
		pkg, name := doc[m[2]:m[3]], doc[m[4]:m[5]]
		end := strings.Index(doc[m[1]:], "`")
		if end < 0 || strings.Contains(doc[m[1]:m[1]+end], "_") || name == "go" || !names[pkg] {
			continue // a YAML key, a file name or not one of ours
		}
		if id := pkg + "." + name; !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// declared: some package whose last element is pkg declares name.
func declared(pkgs map[string]map[string]bool, id string) bool {
	pkg, name, _ := strings.Cut(id, ".")
	for dir, decls := range pkgs {
		if filepath.Base(dir) == pkg && decls[name] {
			return true
		}
	}
	return false
}
