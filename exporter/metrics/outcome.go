package metrics

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// RunIDVar names the variable identifying the scheduled run: the chart sets the Job's name,
// so the pod attempts of one Job (backoffLimit) push under one run label.
const RunIDVar = "RUN_ID"

// RunID returns $RUN_ID, else the start time, which makes each process its own run.
func RunID(lookup func(string) (string, bool), start time.Time) string {
	v, _ := lookup(RunIDVar)
	return cmp.Or(strings.TrimSpace(v), start.UTC().Format(time.RFC3339Nano))
}

// ParseURL checks a PUSHGATEWAY_URL as the configuration does, for reporting a configuration
// error when the rest is invalid. Errors never show a password.
func ParseURL(raw string) (string, error) {
	if !exporter.IsBaseURL(raw) {
		return "", fmt.Errorf("metrics: PUSHGATEWAY_URL %s: accepted: %s", exporter.Redact(raw), exporter.BaseURLAccepted)
	}
	return raw, nil
}
