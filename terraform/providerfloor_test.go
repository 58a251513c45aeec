package terraform_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/providerfloor"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// TestProviderFloors parses every module and example and holds each
// required_providers lower bound to the highest first version, in providerfloor.Table, of the
// resources, data sources and arguments the module uses; a resource or
// data source missing from the table fails the test.
func TestProviderFloors(t *testing.T) {
	for _, dir := range append(slices.Clone(moduleDirs), exampleDirs...) {
		m := load(t, dir)
		floor, missing, err := providerfloor.Floor(providerfloor.Table, usedKeys(t, m))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range missing {
			t.Errorf("%s uses %s, which providerfloor.Table lacks: add it with the first provider version that has it", dir, k)
		}
		bounds := lowerBounds(t, m)
		for p, want := range floor {
			if got, ok := bounds[p]; !ok {
				t.Errorf("%s uses provider %s without a required_providers entry", dir, p)
			} else if got != want {
				t.Errorf("%s: %s lower bound %s, want %s (the first version with everything the module uses)", dir, p, got, want)
			}
		}
		for p := range bounds {
			if _, ok := floor[p]; !ok {
				t.Errorf("%s requires provider %s but uses none of its resources", dir, p)
			}
		}
	}
}

// TestProviderFloorCatches shows the check sees what it must: the
// bill-export module's floor is the Data Export's (5.47.0, so v5.45.0 is
// rejected), the pipeline's is the Glue database tags' (4.66.0), an
// attribute read counts (internal/parquet-table reads the table's arn,
// 2.67.0), a module counts what the local modules it calls use and the
// provider it requires, and a resource the table lacks is reported.
func TestProviderFloorCatches(t *testing.T) {
	floor, _, err := providerfloor.Floor(providerfloor.Table, usedKeys(t, load(t, "modules/bill-export")))
	if err != nil || floor["aws"] != "5.47.0" {
		t.Errorf("bill-export floor %v %v, want aws 5.47.0", floor, err)
	}
	if c, _ := providerfloor.Compare("5.45.0", floor["aws"]); c >= 0 {
		t.Errorf("5.45.0 passes a floor of %s", floor["aws"])
	}
	for dir, want := range map[string]string{"modules/pipeline": "4.66.0", "modules/internal/parquet-table": "2.67.0"} {
		if floor, _, _ = providerfloor.Floor(providerfloor.Table, usedKeys(t, load(t, dir))); floor["aws"] != want {
			t.Errorf("%s floor %v, want aws %s", dir, floor, want)
		}
	}
	pipeline := usedKeys(t, load(t, "modules/pipeline"))
	for _, k := range []string{"provider.aws", "resource.aws_s3_bucket_lifecycle_configuration", "resource.aws_glue_catalog_table.arn"} {
		if !slices.Contains(pipeline, k) {
			t.Errorf("pipeline's keys lack %s", k)
		}
	}
	_, missing, _ := providerfloor.Floor(providerfloor.Table, []string{"resource.aws_s3_bucket", "resource.aws_s3tables_table_bucket"})
	if !slices.Equal(missing, []string{"resource.aws_s3tables_table_bucket"}) {
		t.Errorf("missing = %v", missing)
	}
}

// usedKeys lists what a module and the local modules it calls use, as
// providerfloor keys: every provider it requires, every resource and data
// source, every argument path in them (nested and dynamic blocks
// included; meta-arguments left out), and every attribute read from them.
func usedKeys(t *testing.T, m *tfeval.Module) []string {
	t.Helper()
	var keys []string
	declared := map[string]bool{} // resource.type, data.type
	for _, b := range m.Blocks {
		switch {
		case b.Type == "terraform":
			for _, rp := range b.Body.Blocks {
				if rp.Type == "required_providers" {
					for name := range rp.Body.Attributes {
						keys = append(keys, "provider."+name)
					}
				}
			}
		case b.Type == "provider" && len(b.Labels) == 1:
			// Attributes only: a block of the same name may be another
			// major's syntax (helm 2.x's kubernetes block).
			for name := range b.Body.Attributes {
				keys = append(keys, "provider."+b.Labels[0]+"."+name)
			}
		case b.Type == "module":
			src := strings.Trim(m.Source(b.Body.Attributes["source"].Expr.Range()), `"`)
			if strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") {
				child, err := tfeval.Load(filepath.Join(m.Dir, src))
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, usedKeys(t, child)...)
			}
		case (b.Type == "resource" || b.Type == "data") && len(b.Labels) == 2:
			declared[b.Type+"."+b.Labels[0]] = true
			keys = append(keys, argumentKeys(b.Type+"."+b.Labels[0], b.Body)...)
		}
	}
	for _, b := range m.Blocks {
		keys = append(keys, attributeKeys(b.Body, declared)...)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// argumentKeys lists base and base.path for every argument and block set
// in body.
func argumentKeys(base string, body *hclsyntax.Body) []string {
	keys := []string{base}
	var walk func(prefix string, body *hclsyntax.Body)
	walk = func(prefix string, body *hclsyntax.Body) {
		for name := range body.Attributes {
			switch name {
			case "count", "for_each", "provider", "depends_on":
				continue
			}
			keys = append(keys, prefix+"."+name)
		}
		for _, nb := range body.Blocks {
			switch {
			case nb.Type == "lifecycle" && prefix == base:
			case nb.Type == "dynamic" && len(nb.Labels) == 1:
				for _, c := range nb.Body.Blocks {
					if c.Type == "content" {
						keys = append(keys, prefix+"."+nb.Labels[0])
						walk(prefix+"."+nb.Labels[0], c.Body)
					}
				}
			default:
				keys = append(keys, prefix+"."+nb.Type)
				walk(prefix+"."+nb.Type, nb.Body)
			}
		}
	}
	walk(base, body)
	return keys
}

// attributeKeys lists kind.type.attribute for every reference in body
// (nested blocks included) to an attribute of a declared resource or data
// source: aws_glue_catalog_table.this.arn is resource.aws_glue_catalog_table.arn.
func attributeKeys(body *hclsyntax.Body, declared map[string]bool) []string {
	var keys []string
	for _, a := range body.Attributes {
		for _, tr := range a.Expr.Variables() {
			var names []string
			for _, step := range tr {
				switch s := step.(type) {
				case hcl.TraverseRoot:
					names = append(names, s.Name)
				case hcl.TraverseAttr:
					names = append(names, s.Name)
				}
			}
			kind := "resource"
			if len(names) > 0 && names[0] == "data" {
				kind, names = "data", names[1:]
			}
			if len(names) >= 3 && declared[kind+"."+names[0]] {
				keys = append(keys, kind+"."+names[0]+"."+names[2])
			}
		}
	}
	for _, nb := range body.Blocks {
		keys = append(keys, attributeKeys(nb.Body, declared)...)
	}
	return keys
}

var (
	versionAttr = regexp.MustCompile(`version\s*=\s*"([^"]*)"`)
	lowerBound  = regexp.MustCompile(`>=\s*([0-9]+\.[0-9]+\.[0-9]+)`)
)

// lowerBounds reads each required_providers entry's ">= x.y.z" from its
// text (an entry with configuration_aliases is not a constant value).
func lowerBounds(t *testing.T, m *tfeval.Module) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, b := range m.Of("terraform") {
		for _, rp := range b.Body.Blocks {
			if rp.Type != "required_providers" {
				continue
			}
			for name, a := range rp.Body.Attributes {
				v := versionAttr.FindStringSubmatch(m.Source(a.Expr.Range()))
				if v == nil || lowerBound.FindStringSubmatch(v[1]) == nil || strings.Contains(v[1], "~>") {
					t.Errorf("%s: required_providers.%s has no version with a >= bound", m.Dir, name)
					continue
				}
				out[name] = lowerBound.FindStringSubmatch(v[1])[1]
			}
		}
	}
	return out
}
