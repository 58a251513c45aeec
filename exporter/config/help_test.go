package config

import (
	"strings"
	"testing"
)

func TestUsageListsEveryVariable(t *testing.T) {
	var b strings.Builder
	Usage(&b)
	for _, v := range Vars() {
		if !strings.Contains(b.String(), v.Name) {
			t.Errorf("--help misses %s", v.Name)
		}
	}
	if !strings.Contains(b.String(), "http://kubecost-cost-analyzer.kubecost:9090") {
		t.Errorf("--help misses the endpoint default:\n%s", b.String())
	}
}
