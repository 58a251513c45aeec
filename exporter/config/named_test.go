package config

import (
	"fmt"
	"testing"
)

// TestNamedClusters: the groups a configuration error is pushed to.
func TestNamedClusters(t *testing.T) {
	arn := func(name string) string { return "arn:aws:eks:us-east-1:111122223333:cluster/" + name }
	cases := []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"CLUSTER_ID": arn("prod")}, []string{"prod"}},
		{map[string]string{"CLUSTER_ARNS": "a=" + arn("prod-a") + ", b = " + arn("prod-b") + ",c=" + arn("prod-a")}, []string{"prod-a", "prod-b"}},
		{map[string]string{"CLUSTER_ID": "not-an-arn"}, []string{""}},
		{map[string]string{"CLUSTER_MAP_FILE": "/etc/map.yaml"}, []string{""}},
		{nil, []string{""}},
	}
	for _, tc := range cases {
		if got := NamedClusters(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("NamedClusters(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
