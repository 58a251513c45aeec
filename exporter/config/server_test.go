package config

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
)

// flavorSentence is how the help, the README and the chart's values list
// the flavours: "a (/a), b (/b) or c (/c)".
func flavorSentence() string {
	var items []string
	for _, f := range kubecost.Flavors() {
		items = append(items, string(f)+" ("+f.Path()+")")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// TestServerTextsAreKubecosts: package kubecost knows the servers; the
// struct tags, the README and the chart spell its flavours, paths, cluster
// filters and discovered services as static text, held to it here, so a
// flavour added in kubecost fails until every text lists it.
func TestServerTextsAreKubecosts(t *testing.T) {
	t.Parallel()
	vars := map[string]Var{}
	for _, v := range Vars() {
		vars[v.Name] = v
	}
	flavor, filter, endpoint := vars["KUBECOST_API_FLAVOR"], vars["KUBECOST_CLUSTER_FILTER"], vars["KUBECOST_API_ENDPOINT"]
	if flavor.Desc != flavorSentence() || flavor.Default != string(kubecost.Flavors()[0]) {
		t.Errorf("KUBECOST_API_FLAVOR: default %q, desc %q; kubecost says %q, %q", flavor.Default, flavor.Desc, kubecost.Flavors()[0], flavorSentence())
	}
	if filter.Default != string(kubecost.ClusterFilters()[0]) {
		t.Errorf("KUBECOST_CLUSTER_FILTER: default %q, kubecost's %q", filter.Default, kubecost.ClusterFilters()[0])
	}
	for _, f := range kubecost.ClusterFilters() {
		if !strings.Contains(filter.Desc, string(f)+" (") {
			t.Errorf("KUBECOST_CLUSTER_FILTER's desc does not explain %s: %q", f, filter.Desc)
		}
	}
	for _, c := range kubecost.Candidates("<namespace>", "<release>") {
		if !strings.Contains(endpoint.Desc, c.URL) {
			t.Errorf("KUBECOST_API_ENDPOINT's desc does not name discovery's %s: %q", c.URL, endpoint.Desc)
		}
	}
	for _, file := range []string{"../../README.md", "../../chart/values.yaml"} {
		if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), flavorSentence()) {
			t.Errorf("%s does not list the flavours as %q (%v)", file, flavorSentence(), err)
		}
	}
	b, err := os.ReadFile("../../chart/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Exporter struct {
				Properties map[string]struct{ Enum []string }
			}
		}
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	enums := schema.Properties.Exporter.Properties
	if got, want := enums["kubecostApiFlavor"].Enum, names(kubecost.Flavors()); !slices.Equal(got, want) {
		t.Errorf("chart schema: kubecostApiFlavor enum %q, kubecost's flavours %q", got, want)
	}
	if got, want := enums["clusterFilter"].Enum, names(kubecost.ClusterFilters()); !slices.Equal(got, want) {
		t.Errorf("chart schema: clusterFilter enum %q, kubecost's filters %q", got, want)
	}
}

// The setting's default is the client's: a MAX_VALUE_BYTES left unset
// admits kubecost's TestEscapedAnnotationFitsDefault.
func TestMaxValueBytesDefault(t *testing.T) {
	t.Parallel()
	cfg, err := loadWith(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxValueBytes != kubecost.DefaultMaxValueBytes || kubecost.DefaultMaxValueBytes < 6*256<<10 {
		t.Errorf("MAX_VALUE_BYTES default %d, client default %d; want them equal and at least 6 x 256 KiB", cfg.MaxValueBytes, kubecost.DefaultMaxValueBytes)
	}
}
