package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestRunID(t *testing.T) {
	start := time.Date(2026, 11, 3, 0, 0, 5, 0, time.UTC)
	if got := metrics.RunID(env(map[string]string{"RUN_ID": " kse-29372160 "}), start); got != "kse-29372160" {
		t.Errorf("RunID with RUN_ID set = %q", got)
	}
	for _, e := range []map[string]string{nil, {"RUN_ID": ""}} {
		if got := metrics.RunID(env(e), start); got != "2026-11-03T00:00:05Z" {
			t.Errorf("RunID without RUN_ID = %q, want the start time", got)
		}
	}
}

func TestParseURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://pushgateway.monitoring:9091": true, "https://ops:pw@push.example.com/prefix": true,
		"pushgateway:9091": false, "http://": false, "http://push?job=x": false, "": false,
	} {
		_, err := metrics.ParseURL(raw)
		if (err == nil) != ok {
			t.Errorf("ParseURL(%q) = %v, want ok %v", raw, err, ok)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("ParseURL error shows the password: %v", err)
		}
	}
}
