package metrics

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
)

// RunIDVar names the variable that identifies the scheduled run. The chart
// sets it to the Job's name, so the pod attempts of one Job (backoffLimit)
// push under one run label and the alerts count scheduled runs, not pods.
const RunIDVar = "RUN_ID"

// RunID returns the run's identity: $RUN_ID, else the start time, which
// makes each process its own run.
func RunID(lookup func(string) (string, bool), start time.Time) string {
	if v, ok := lookup(RunIDVar); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return start.UTC().Format(time.RFC3339Nano)
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

// Planned reports whether a cluster whose part of the run ended with err
// got as far as a plan. A run that stopped before planning (Kubecost
// unreachable, a start-up failure, a panic) or a cluster whose own planning
// failed (a denied listing) leaves only the window in its plan: it must
// push no archive_missing_days, which would read as "no hole" and reset the
// hole alert, so the last known count stays in the Pushgateway. Failed or
// unfinished days and a failed clean-up come after the plan.
func Planned(err error) bool {
	return err == nil || errors.Is(err, app.ErrDaysFailed) || errors.Is(err, app.ErrCleanupFailed)
}
