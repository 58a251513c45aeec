package config

import (
	"fmt"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/grammars"
)

// TestGrammarTables: every variable that holds an EKS cluster ARN or a
// base URL accepts exactly what the one grammar accepts, and names the
// clusters it says.
func TestGrammarTables(t *testing.T) {
	for _, tc := range grammars.ClusterARNs() {
		c, err := loadWith(map[string]string{"CLUSTER_ID": tc.ARN})
		if (err == nil) != tc.OK || (err == nil && c.Members()[0].Name != tc.Name) {
			t.Errorf("CLUSTER_ID=%q: %v", tc.ARN, err)
		}
		c, err = loadWith(map[string]string{"CLUSTER_ID": unset, "CLUSTER_ARNS": "k=" + tc.ARN, "S3_EXPECTED_BUCKET_OWNER": "disabled"})
		if (err == nil) != tc.OK || (err == nil && c.Members()[0].Name != tc.Name) {
			t.Errorf("CLUSTER_ARNS=k=%q: %v", tc.ARN, err)
		}
		want := []string{""}
		if tc.OK {
			want = []string{tc.Name}
		}
		for _, env := range []map[string]string{{"CLUSTER_ID": tc.ARN}, {"CLUSTER_ARNS": "k=" + tc.ARN}} {
			if got := NamedClusters(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("NamedClusters(%v) = %q, want %q", env, got, want)
			}
		}
	}
	for _, tc := range grammars.BaseURLs() {
		for _, name := range []string{"KUBECOST_API_ENDPOINT", "PUSHGATEWAY_URL"} {
			if _, err := loadWith(map[string]string{name: tc.URL}); (err == nil) != tc.OK {
				t.Errorf("%s=%q: %v, want ok %v", name, tc.URL, err, tc.OK)
			}
		}
	}
}
