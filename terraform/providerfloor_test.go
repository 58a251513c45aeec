package terraform_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/providerfloor"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// TestProviderFloors parses every module and holds each required_providers
// lower bound to the highest first version, in providerfloor.Table, of the
// resources, data sources and arguments the module uses; a resource or
// data source missing from the table fails the test.
func TestProviderFloors(t *testing.T) {
	for _, dir := range moduleDirs {
		m := load(t, dir)
		floor, missing, err := providerfloor.Floor(providerfloor.Table, usedKeys(m))
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
// rejected), a module without it stays at 5.40.0, and a resource the
// table lacks is reported.
func TestProviderFloorCatches(t *testing.T) {
	floor, _, err := providerfloor.Floor(providerfloor.Table, usedKeys(load(t, "modules/bill-export")))
	if err != nil || floor["aws"] != "5.47.0" {
		t.Errorf("bill-export floor %v %v, want aws 5.47.0", floor, err)
	}
	if c, _ := providerfloor.Compare("5.45.0", floor["aws"]); c >= 0 {
		t.Errorf("5.45.0 passes a floor of %s", floor["aws"])
	}
	floor, _, _ = providerfloor.Floor(providerfloor.Table, usedKeys(load(t, "modules/pipeline")))
	if floor["aws"] != "5.40.0" {
		t.Errorf("pipeline floor %v, want aws 5.40.0", floor)
	}
	_, missing, _ := providerfloor.Floor(providerfloor.Table, []string{"resource.aws_s3_bucket", "resource.aws_s3tables_table_bucket"})
	if !slices.Equal(missing, []string{"resource.aws_s3tables_table_bucket"}) {
		t.Errorf("missing = %v", missing)
	}
}

// usedKeys lists what a module uses, as providerfloor keys: every resource
// and data source, and every argument path in them (nested and dynamic
// blocks included; meta-arguments left out).
func usedKeys(m *tfeval.Module) []string {
	var keys []string
	for _, b := range m.Blocks {
		if (b.Type != "resource" && b.Type != "data") || len(b.Labels) != 2 {
			continue
		}
		base := b.Type + "." + b.Labels[0]
		keys = append(keys, base)
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
		walk(base, b.Body)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
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
