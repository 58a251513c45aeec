package metrics

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// RunIDVar names the variable that identifies the scheduled run. The chart
// sets it to the Job's name, so the pod attempts of one Job (backoffLimit)
// push under one run label and the alerts count scheduled runs, not pods.
const RunIDVar = "RUN_ID"

// RunID returns the run's identity: $RUN_ID, else the start time, which
// makes each process its own run.
func RunID(lookup func(string) (string, bool), start time.Time) string {
	v, _ := lookup(RunIDVar)
	return cmp.Or(strings.TrimSpace(v), start.UTC().Format(time.RFC3339Nano))
}

// ParseURL checks a PUSHGATEWAY_URL the way the configuration does; it is
// used on its own when the rest of the configuration is invalid, so that a
// configuration error is still reported. Errors never show a password.
func ParseURL(raw string) (string, error) {
	if !exporter.IsBaseURL(raw) {
		return "", fmt.Errorf("metrics: PUSHGATEWAY_URL %s: accepted: %s", exporter.Redact(raw), exporter.BaseURLAccepted)
	}
	return raw, nil
}
