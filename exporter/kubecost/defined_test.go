package kubecost

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/grammars"
)

// TestServersDefinedOnce is TestGrammarsDefinedOnce (package exporter)
// for the servers: no product Go file outside this package spells a
// flavour's name or allocation path or a cluster filter's parameter, so config, cli and the rest ask
// Flavors, Flavor.Path and FilterProblem. "kubecost" is also a namespace,
// a release and a word of log lines: as a flavour it is only refused where
// a value is told apart by it (== or a case). Struct tags are left to
// config's TestServerTextsAreKubecosts, which holds them to this package.
func TestServersDefinedOnce(t *testing.T) {
	t.Parallel()
	lits, err := grammars.ProductLiterals("../..")
	if err != nil {
		t.Fatal(err)
	}
	var names, paths []string
	for _, f := range Flavors() {
		names, paths = append(names, string(f)), append(paths, f.Path())
	}
	spells := func(l grammars.Literal) bool {
		// The paths, also inside a message, and the cluster filters' query
		// parameters (ClusterFilter.param).
		for _, s := range []string{"/model/allocation", "/allocation/compute", "filterClusters", `cluster:"`} {
			if strings.Contains(l.Value, s) {
				return true
			}
		}
		if slices.Contains(paths, l.Value) {
			return true
		}
		return slices.Contains(names, l.Value) && (l.Compared || l.Value != string(FlavorKubecost))
	}
	home := 0
	for _, l := range lits {
		switch {
		case l.Tag || !spells(l):
		case strings.HasPrefix(l.File, "exporter/kubecost/"):
			home++
		default:
			t.Errorf("%s spells the server's %q: ask package kubecost (Flavors, Flavor.Path, FilterProblem)", l.File, l.Value)
		}
	}
	if home < 2*len(names) {
		t.Errorf("%d spellings in exporter/kubecost, want every flavour's name and path: the test no longer sees the definitions", home)
	}
}
