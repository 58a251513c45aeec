package terraform_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/gocty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// Directories of the Terraform modules and examples.
var (
	moduleDirs  = gen.ModuleDirs()
	exampleDirs = gen.ExampleDirs()
)

// Sample accounts, cluster and bucket of the tests.
const (
	pipelineAccount = "111122223333"
	otherAccount    = "444455556666"
	testBucket      = "kubecost-allocations"
)

func load(t *testing.T, dir string) *tfeval.Module {
	t.Helper()
	m, err := tfeval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  committed: " + gl + "\n  generated: " + wl
		}
	}
	return ""
}

// strs converts a known list, set or tuple of strings.
func strs(t *testing.T, v cty.Value) []string {
	t.Helper()
	if v.IsNull() {
		return nil
	}
	if !v.IsWhollyKnown() {
		t.Fatalf("value is not known: %#v", v)
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		out = append(out, e.AsString())
	}
	return out
}

func str(t *testing.T, v cty.Value) string {
	t.Helper()
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		t.Fatalf("not a known string: %#v", v)
	}
	return v.AsString()
}

func attr(t *testing.T, i tfeval.Instance, name string) cty.Value {
	t.Helper()
	v, err := i.Attr(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func blocks(t *testing.T, i tfeval.Instance, typ string) []tfeval.Instance {
	t.Helper()
	b, err := i.Blocks(typ)
	if err != nil {
		t.Fatalf("%s blocks: %v", typ, err)
	}
	return b
}

func one(t *testing.T, i tfeval.Instance, typ string) tfeval.Instance {
	t.Helper()
	b := blocks(t, i, typ)
	if len(b) != 1 {
		t.Fatalf("want one %s block, got %d", typ, len(b))
	}
	return b[0]
}

func root(t *testing.T, s *tfeval.Scope, typ string, labels ...string) tfeval.Instance {
	t.Helper()
	b := s.M.Find(typ, labels...)
	if b == nil {
		t.Fatalf("no %s %v in %s", typ, labels, s.M.Dir)
	}
	return s.Root(b)
}

// each is the instance at key of a for_each block.
func each(t *testing.T, s *tfeval.Scope, key, typ string, labels ...string) tfeval.Instance {
	t.Helper()
	b := s.M.Find(typ, labels...)
	if b == nil {
		t.Fatalf("no %s %v in %s", typ, labels, s.M.Dir)
	}
	i, err := s.Each(b, key)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func count(t *testing.T, s *tfeval.Scope, typ string, labels ...string) int {
	t.Helper()
	b := s.M.Find(typ, labels...)
	if b == nil {
		t.Fatalf("no %s %v in %s", typ, labels, s.M.Dir)
	}
	n, err := s.Count(b)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func output(t *testing.T, s *tfeval.Scope, name string) cty.Value {
	t.Helper()
	return attr(t, root(t, s, "output", name), "value")
}

// val converts a Go value (string, bool, number, []string, map[string]string)
// into a cty value.
func val(t *testing.T, v any) cty.Value {
	t.Helper()
	switch x := v.(type) {
	case cty.Value:
		return x
	case []string:
		if len(x) == 0 {
			return cty.ListValEmpty(cty.String)
		}
	case map[string]any:
		m := map[string]cty.Value{}
		for k, e := range x {
			m[k] = val(t, e)
		}
		return cty.ObjectVal(m)
	}
	ty, err := gocty.ImpliedType(v)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gocty.ToCtyValue(v, ty)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func vars(t *testing.T, m map[string]any) map[string]cty.Value {
	t.Helper()
	out := map[string]cty.Value{}
	for k, v := range m {
		out[k] = val(t, v)
	}
	return out
}

func obj(kv ...string) cty.Value {
	m := map[string]cty.Value{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = cty.StringVal(kv[i+1])
	}
	return cty.ObjectVal(m)
}

// pipelineScope evaluates the pipeline module in pipelineAccount, eu-west-1.
func pipelineScope(t *testing.T, in map[string]any) *tfeval.Scope {
	t.Helper()
	m := load(t, "modules/pipeline")
	v := map[string]any{"bucket_name": testBucket}
	for k, x := range in {
		v[k] = x
	}
	s, err := m.Evaluate(tfeval.Inputs{
		Vars: vars(t, v),
		Refs: map[string]cty.Value{
			"data.aws_caller_identity.current": obj("account_id", pipelineAccount),
			"data.aws_partition.current":       obj("partition", "aws"),
			"data.aws_region.current":          obj("id", "eu-west-1", "name", "eu-west-1"),
			// Attributes AWS returns, for the default names.
			"aws_glue_catalog_database.this": obj("name", "kubecost_db", "arn", "arn:aws:glue:eu-west-1:"+pipelineAccount+":database/kubecost_db"),
			"module.table":                   obj("name", "kubecost_table", "arn", "arn:aws:glue:eu-west-1:"+pipelineAccount+":table/kubecost_db/kubecost_table"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// parquetTable is the Glue table a module's call "table" of
// modules/internal/parquet-table creates, evaluated with the caller's
// arguments.
func parquetTable(t *testing.T, s *tfeval.Scope) tfeval.Instance {
	t.Helper()
	child, err := s.Call("table", nil)
	if err != nil {
		t.Fatal(err)
	}
	return root(t, child, "resource", "aws_glue_catalog_table", "this")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
