package terraform_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// TestVariablesHaveDescriptionAndType covers every module and example.
func TestVariablesHaveDescriptionAndType(t *testing.T) {
	for _, dir := range append(moduleDirs, exampleDirs...) {
		m := load(t, dir)
		vs, err := m.Variables()
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, v := range vs {
			if strings.TrimSpace(v.Description) == "" {
				t.Errorf("%s: variable %q has no description", dir, v.Name)
			}
			if !v.HasType {
				t.Errorf("%s: variable %q has no type", dir, v.Name)
			}
			if v.Block.File != "variables.tf" {
				t.Errorf("%s: variable %q is declared in %s, not variables.tf", dir, v.Name, v.Block.File)
			}
		}
		for _, o := range m.Of("output") {
			if _, ok := o.Body.Attributes["description"]; !ok {
				t.Errorf("%s: output %q has no description", dir, o.Labels[0])
			}
			if o.File != "outputs.tf" {
				t.Errorf("%s: output %q is declared in %s, not outputs.tf", dir, o.Labels[0], o.File)
			}
		}
		if len(m.Of("terraform")) == 0 {
			t.Errorf("%s: no terraform block (versions.tf)", dir)
		}
	}
}

// TestProviderConstraints checks that every module pins Terraform and each
// provider it uses with a lower bound.
func TestProviderConstraints(t *testing.T) {
	for _, dir := range append(moduleDirs, exampleDirs...) {
		m := load(t, dir)
		used := map[string]bool{}
		for _, b := range m.Blocks {
			if b.Type == "resource" || b.Type == "data" {
				used[strings.SplitN(b.Labels[0], "_", 2)[0]] = true
			}
		}
		declared := map[string]string{}
		for _, tb := range m.Of("terraform") {
			if _, ok := tb.Body.Attributes["required_version"]; !ok {
				t.Errorf("%s: no required_version", dir)
			}
			for _, rp := range tb.Body.Blocks {
				if rp.Type != "required_providers" {
					continue
				}
				for name, a := range rp.Body.Attributes {
					cons, ok := a.Expr.(*hclsyntax.ObjectConsExpr)
					if !ok {
						t.Errorf("%s: provider %s has no source/version object", dir, name)
						continue
					}
					for _, item := range cons.Items {
						if k := hcl.ExprAsKeyword(item.KeyExpr); k == "version" {
							v, _ := item.ValueExpr.Value(nil)
							declared[name] = v.AsString()
						}
					}
				}
			}
		}
		for p := range used {
			if p == "terraform" {
				continue
			}
			if c, ok := declared[p]; !ok || !strings.Contains(c, ">=") {
				t.Errorf("%s: provider %s is used without a >= version constraint (%q)", dir, p, c)
			}
		}
	}
}

// validation is one value for a variable and whether it must be accepted.
type validation struct {
	module, variable string
	value            any
	ok               bool
}

func TestVariableValidations(t *testing.T) {
	var cases []validation
	for _, mod := range []string{"modules/pipeline", "modules/exporter"} {
		for _, p := range []struct {
			v  string
			ok bool
		}{
			{"", true}, {"team-a/costs/", true}, {"a/", true}, {"a=b/c.d/", true},
			{"a", false}, {"/a/", false}, {"a//", false}, {"a*/", false}, {"a?/", false}, {"${x}/", false}, {"a b/", false},
		} {
			cases = append(cases, validation{mod, "s3_prefix", p.v, p.ok})
		}
		for _, b := range []struct {
			v  string
			ok bool
		}{
			{"kubecost-allocations", true}, {"a.b-c", true},
			{"Kubecost", false}, {"ab", false}, {"a..b", false}, {"192.168.0.1", false}, {"xn--abc", false}, {"data-s3alias", false}, {"-abc", false},
		} {
			cases = append(cases, validation{mod, "bucket_name", b.v, b.ok})
		}
		cases = append(cases,
			validation{mod, "labels", []string{"app", "app.kubernetes.io/name", "team_1"}, true},
			validation{mod, "labels", []string{"bad key"}, false},
			validation{mod, "labels", []string{"Example.com/x"}, false},
		)
	}
	cases = append(cases,
		validation{"modules/bill-focus", "origin", "focus_export", true},
		validation{"modules/bill-focus", "origin", "cur", true},
		validation{"modules/bill-focus", "origin", "CUR", false},
		validation{"modules/bill-focus", "origin", "focus", false},
		validation{"modules/pipeline", "labels", []string{"App", "app"}, false},
		validation{"modules/pipeline", "view_retention_months", 0, true},
		validation{"modules/pipeline", "view_retention_months", 1.5, false},
		validation{"modules/pipeline", "crawler_schedule", "cron(0 2 * * ? *)", true},
		validation{"modules/pipeline", "crawler_schedule", "0 2 * * *", false},
		validation{"modules/pipeline", "partition_projection", map[string]any{"enabled": true}, false},
		validation{"modules/pipeline", "exporter_principal_arns", []string{"arn:aws:iam::111122223333:user/bob"}, false},
		validation{"modules/exporter", "cluster_arn", "arn:aws:eks:eu-west-1:111122223333:cluster/prod", true},
		validation{"modules/exporter", "cluster_arn", "arn:aws-us-gov:eks:us-gov-west-1:111122223333:cluster/eu_prod-2", true},
		validation{"modules/exporter", "cluster_arn", "arn:aws:eks:eu-west-1:1111:cluster/prod", false},
		validation{"modules/exporter", "cluster_arn", "arn:aws:eks:eu-west-1:111122223333:cluster/prod*", false},
		validation{"modules/exporter", "cluster_arn", "arn:aws:eks:eu-west-1:111122223333:cluster/prod/x", false},
		validation{"modules/exporter", "cluster_arn", "arn:aws:eks:abc-west-1:111122223333:cluster/prod", false},
		validation{"modules/exporter", "codecs", []string{"lz4"}, false},
		validation{"modules/exporter", "object_store_secret", map[string]any{"name": "kubecost-federated-store", "key": "federated-store.yaml"}, true},
		validation{"modules/exporter", "object_store_secret", map[string]any{"name": "Kubecost_Store"}, false},
		validation{"modules/exporter", "object_store_secret", map[string]any{"name": "kubecost-store", "key": "a/b.yaml"}, false},
		validation{"modules/exporter", "codecs", []string{}, false},
		validation{"modules/exporter", "oidc_provider_arn", "arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/AB", true},
		validation{"modules/exporter", "oidc_provider_arn", "arn:aws:iam::111122223333:role/x", false},
		validation{"modules/quicksight", "principal_arns", []string{}, false},
		validation{"modules/quicksight", "principal_arns", []string{"arn:aws:quicksight:us-east-1:111122223333:user/default/alice"}, true},
		validation{"modules/quicksight", "refresh_time_of_day", "24:00", false},
	)
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s=%v", c.module, c.variable, c.value), func(t *testing.T) {
			m := load(t, c.module)
			vs, err := m.Variables()
			if err != nil {
				t.Fatal(err)
			}
			var v cty.Value
			for _, decl := range vs {
				if decl.Name == c.variable {
					v = val(t, c.value)
					if decl.Defaults != nil {
						v = decl.Defaults.Apply(v)
					}
				}
			}
			if v == cty.NilVal {
				t.Fatalf("no variable %s", c.variable)
			}
			msgs, err := m.CheckVariable(c.variable, v)
			if err != nil {
				t.Fatal(err)
			}
			if ok := len(msgs) == 0; ok != c.ok {
				t.Errorf("accepted = %v, want %v (%v)", ok, c.ok, msgs)
			}
		})
	}
}

// goAccepts runs the exporter's own configuration validation on one
// variable.
func goAccepts(name, value string) bool {
	env := map[string]string{
		"S3_BUCKET_NAME": testBucket,
		"CLUSTER_ID":     clusterARN(pipelineAccount, "eu-west-1", "prod"),
		name:             value,
	}
	_, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	var errs exporter.FieldErrors
	if errors.As(err, &errs) {
		for _, e := range errs {
			if e.Field == name {
				return false
			}
		}
	}
	return true
}

// TestValidationsAgreeWithExporter checks that whatever the modules accept
// for CLUSTER_ID, S3_BUCKET_NAME, S3_PREFIX and LABELS the exporter accepts
// too (the modules are stricter where a value would widen IAM patterns),
// and that cluster ARNs are judged alike.
func TestValidationsAgreeWithExporter(t *testing.T) {
	exp := load(t, "modules/exporter")
	check := func(variable, env string, values ...string) {
		for _, v := range values {
			msgs, err := exp.CheckVariable(variable, cty.StringVal(v))
			if err != nil {
				t.Fatal(err)
			}
			tf, goOK := len(msgs) == 0, goAccepts(env, v)
			if tf && !goOK {
				t.Errorf("%s=%q: the module accepts what the exporter rejects", env, v)
			}
			if variable == "cluster_arn" && tf != goOK {
				t.Errorf("CLUSTER_ID=%q: module accepts %v, exporter accepts %v", v, tf, goOK)
			}
		}
	}
	check("cluster_arn", "CLUSTER_ID",
		"arn:aws:eks:eu-west-1:111122223333:cluster/prod",
		"arn:aws-cn:eks:cn-north-1:111122223333:cluster/a_b-c",
		"arn:aws-us-gov:eks:us-gov-west-1:111122223333:cluster/x",
		"arn:aws-eusc:eks:eusc-de-east-1:111122223333:cluster/x",
		"arn:aws:eks:eu-west-1:111122223333:cluster/-x",
		"arn:aws:eks:eu-west-1:111122223333:cluster/"+strings.Repeat("a", 101),
		"arn:aws:eks:eu-west-1:11112222333:cluster/prod",
		"arn:aws:ec2:eu-west-1:111122223333:cluster/prod",
		"arn:aws:eks:EU-west-1:111122223333:cluster/prod",
	)
	check("bucket_name", "S3_BUCKET_NAME", "kubecost-allocations", "a.b", "xn--a", "sthree-a", "b--ol-s3", "b.mrap", "b--x-s3", "b--table-s3", "1.2.3.4", "a..b", "UP")
	check("s3_prefix", "S3_PREFIX", "", "a/", "a/b/", "a", "/a/", "a//b/")
	for _, labels := range [][]string{{"app"}, {"app.kubernetes.io/name"}, {"Example.com/x"}, {"a/b/c"}, {"-a"}} {
		msgs, _ := exp.CheckVariable("labels", val(t, labels))
		if len(msgs) == 0 && !goAccepts("LABELS", strings.Join(labels, ",")) {
			t.Errorf("labels %v: the module accepts what the exporter rejects", labels)
		}
	}
}

// TestExamplesWiring checks that the examples feed each module from the
// others: the dataset from the pipeline's view, the bucket policy from the
// exporters' writer roles, and the same labels everywhere.
func TestExamplesWiring(t *testing.T) {
	for _, dir := range exampleDirs {
		m := load(t, dir)
		src := func(b *tfeval.Block, name string) string {
			a, ok := b.Body.Attributes[name]
			if !ok {
				t.Errorf("%s: module %s does not set %s", dir, b.Name(), name)
				return ""
			}
			return strings.Join(strings.Fields(m.Source(a.Expr.Range())), " ")
		}
		byKind := map[string][]*tfeval.Block{}
		for _, b := range m.Of("module") {
			s := src(b, "source")
			kind := s[strings.LastIndex(s, "/")+1 : len(s)-1]
			byKind[kind] = append(byKind[kind], b)
		}
		if len(byKind["pipeline"]) != 1 || len(byKind["quicksight"]) != 1 || len(byKind["exporter"]) == 0 {
			t.Fatalf("%s: want one pipeline, one quicksight and exporter modules; got %v", dir, sortedKeys(byKind))
		}
		pipeline := byKind["pipeline"][0]
		pname := pipeline.Labels[0]
		writers := src(pipeline, "exporter_principal_arns")
		for _, e := range byKind["exporter"] {
			if !strings.Contains(writers, "module."+e.Labels[0]+".writer_role_arn") {
				t.Errorf("%s: exporter_principal_arns (%s) lacks module.%s.writer_role_arn", dir, writers, e.Labels[0])
			}
			for _, attr := range []string{"labels", "annotations"} {
				if g, w := src(e, attr), src(pipeline, attr); g != w {
					t.Errorf("%s: module %s %s = %s, pipeline's = %s", dir, e.Labels[0], attr, g, w)
				}
			}
			if g := src(e, "bucket_name"); g != "module."+pname+".bucket_name" {
				t.Errorf("%s: module %s bucket_name = %s, want module.%s.bucket_name", dir, e.Labels[0], g, pname)
			}
		}
		q := byKind["quicksight"][0]
		for _, out := range []string{"view_columns", "view_name", "database_name", "athena_workgroup_name"} {
			if g := src(q, out); g != "module."+pname+"."+out {
				t.Errorf("%s: quicksight %s = %s, want module.%s.%s", dir, out, g, pname, out)
			}
		}
		// The bill views read the pipeline's view, in its database.
		for _, b := range byKind["bill"] {
			for attr, out := range map[string]string{"database_name": "database_name", "kubecost_view_name": "view_name", "bill_retention_months": "view_retention_months"} {
				if g := src(b, attr); g != "module."+pname+"."+out {
					t.Errorf("%s: bill %s = %s, want module.%s.%s", dir, attr, g, pname, out)
				}
			}
			if g := src(q, "bill_view"); !strings.Contains(g, "module."+b.Labels[0]+"[0].view_columns.namespace_daily") {
				t.Errorf("%s: quicksight bill_view = %s, not the bill module's namespace_daily view", dir, g)
			}
		}
	}
}
