package kubecost

import (
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/grammars"
)

// TestGrammarTables: the client takes its URL by the exporter's URL
// grammar (a query of its own allowed) and knows idle rows by the one
// spelling of Kubecost's special names.
func TestGrammarTables(t *testing.T) {
	for _, tc := range grammars.BaseURLs() {
		_, err := New(Options{URL: tc.URL, Aggregate: containerAggregate, Step: time.Hour, Projection: testProjection()})
		if (err == nil) != (tc.OK || tc.QueryOnly) {
			t.Errorf("New(URL %q): %v", tc.URL, err)
		}
	}
	for _, tc := range grammars.Allocations() {
		if got := isIdle(tc.Name, tc.Cluster); got != tc.Idle {
			t.Errorf("isIdle(%q, %q) = %v, want %v", tc.Name, tc.Cluster, got, tc.Idle)
		}
	}
}
