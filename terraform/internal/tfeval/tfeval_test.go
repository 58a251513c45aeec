package tfeval_test

import (
	"encoding/json"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"sigs.k8s.io/yaml"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// The expressions below are the kinds the modules use. The test evaluates
// them with tfeval and, when the pinned Terraform is available, with
// Terraform itself (no provider needed), and compares the results.
const sampleTF = `
variable "o" {
  type = object({
    a = optional(string, "x")
    b = optional(list(string), [])
  })
  default = {}
}

variable "n" {
  type    = string
  default = null
}

locals {
  coalesce_skips_empty = coalesce(var.n, "", "z")
  replace_regex        = replace("a--b-c", "/-+/", "_")
  replace_plain        = replace("a.b", ".", "/")
  length_string        = length("héllo")
  regex_named          = regex("^(?P<x>[a-z]+)-(?P<y>[0-9]+)$", "ab-12")
  format_join          = format("ifelse(%s, '')", join(", ", [for k in ["a", "b"] : "$${P} = '${k}', {x.${k}}"]))
  json_escapes         = jsonencode({ b = "<&> \"q\"", a = [1, 2.5, true, null] })
  yaml                 = yamlencode({ a = ["x"], b = { c = "d" }, e = "" })
  sha1                 = sha1("kubecost")
  base64               = base64encode("{\"a\":1}")
  template             = templatefile("${path.module}/t.tftpl", { xs = ["a", "b.c"], n = 3 })
  merge_conditional    = merge({ a = "1" }, "" == "" ? {} : { b = "2" })
  first_match          = [for c in [{ t = "string", n = "a" }, { t = "double", n = "b" }] : c if c.t == "string"][0]
  trimprefix           = [for n in ["properties.labels.app", "name"] : trimprefix(n, "properties.labels.") if startswith(n, "properties.labels.")]
  alltrue_can          = alltrue([true, can(regex("^a", "abc")), !can(regex("^z", "abc"))])
  optional_defaults    = var.o
  substr_hash          = "${substr("a-very-long-cluster-name-that-goes-on", 0, 10)}-${substr(sha1("x"), 0, 8)}"
  for_each_shape       = length(["x"]) > 0 ? [1] : []
  lower_concat         = concat([lower("A.B")], [for k in ["Team"] : lower("p.${k}")])
}

output "all" {
  value = {
    coalesce_skips_empty = local.coalesce_skips_empty
    replace_regex        = local.replace_regex
    replace_plain        = local.replace_plain
    length_string        = local.length_string
    regex_named          = local.regex_named
    format_join          = local.format_join
    json_escapes         = local.json_escapes
    yaml                 = local.yaml
    sha1                 = local.sha1
    base64               = local.base64
    template             = local.template
    merge_conditional    = local.merge_conditional
    first_match          = local.first_match
    trimprefix           = local.trimprefix
    alltrue_can          = local.alltrue_can
    optional_defaults    = local.optional_defaults
    substr_hash          = local.substr_hash
    for_each_shape       = local.for_each_shape
    lower_concat         = local.lower_concat
  }
}
`

const sampleTemplate = `SELECT
%{ for i, c in xs ~}
  ${i == 0 ? " " : ","} "${c}"
%{ endfor ~}
LIMIT ${n}
`

func writeSample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"main.tf": sampleTF, "t.tftpl": sampleTemplate} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func evalSample(t *testing.T, dir string) map[string]any {
	t.Helper()
	m, err := tfeval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Evaluate(tfeval.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range s.LocalErrs {
		t.Errorf("local.%s: %v", name, err)
	}
	v, err := s.Eval(m.Find("output", "all").Body.Attributes["value"].Expr)
	if err != nil {
		t.Fatal(err)
	}
	return toGo(t, v)
}

func toGo(t *testing.T, v cty.Value) map[string]any {
	t.Helper()
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEvaluate(t *testing.T) {
	got := evalSample(t, writeSample(t))
	want := map[string]any{
		"coalesce_skips_empty": "z",
		"replace_regex":        "a_b_c",
		"replace_plain":        "a/b",
		"length_string":        5.0,
		"format_join":          "ifelse(${P} = 'a', {x.a}, ${P} = 'b', {x.b}, '')",
		"template":             "SELECT\n    \"a\"\n  , \"b.c\"\nLIMIT 3\n",
		"trimprefix":           []any{"app"},
		"alltrue_can":          true,
		"optional_defaults":    map[string]any{"a": "x", "b": []any{}},
		"for_each_shape":       []any{1.0},
		"lower_concat":         []any{"a.b", "p.team"},
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
}

// TestEvaluateLikeTerraform compares tfeval with the pinned Terraform.
func TestEvaluateLikeTerraform(t *testing.T) {
	bin := tooltest.Require(t, "terraform", "TERRAFORM_BIN")
	dir := writeSample(t)
	tf := func(args ...string) []byte {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("terraform %v: %v\n%s", args, err, out)
		}
		return out
	}
	tf("init", "-input=false", "-no-color")
	tf("apply", "-auto-approve", "-input=false", "-no-color")
	var want map[string]any
	if err := json.Unmarshal(tf("output", "-json", "all"), &want); err != nil {
		t.Fatal(err)
	}
	got := evalSample(t, dir)
	// yamlencode's formatting differs (quoting); compare the documents.
	for _, m := range []map[string]any{got, want} {
		var doc any
		if err := yaml.Unmarshal([]byte(m["yaml"].(string)), &doc); err != nil {
			t.Fatal(err)
		}
		m["yaml"] = doc
	}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: tfeval %#v, terraform %#v", k, got[k], want[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("tfeval has %d outputs, terraform %d", len(got), len(want))
	}
}
