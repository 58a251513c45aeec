package metrics_test

import (
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/grammars"
)

// TestURLGrammar: PUSHGATEWAY_URL, read alone for a configuration error,
// accepts what the configuration accepts.
func TestURLGrammar(t *testing.T) {
	for _, tc := range grammars.BaseURLs() {
		if _, err := metrics.ParseURL(tc.URL); (err == nil) != tc.OK {
			t.Errorf("ParseURL(%q): %v, want ok %v", tc.URL, err, tc.OK)
		}
	}
}
