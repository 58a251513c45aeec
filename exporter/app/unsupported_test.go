package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
)

// A day that fails because the server cannot answer the run's queries (an
// OpenCost that ignores the cluster filter) stops the run: the later days
// are not asked for, every day reports that error, and the log says what
// it is instead of promising that the next run retries.
func TestRunStopsOnUnsupportedServer(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	unsupported := fmt.Errorf("OpenCost ignored the cluster filter: %w", exporter.ErrServerUnsupported)
	src := &memSource{days: map[time.Time]fetchFunc{}}
	for _, d := range days {
		src.days[d] = func(ctx context.Context, sink exporter.RecordSink) error { return unsupported }
	}
	var logs bytes.Buffer
	o := options(src, newMemStore())
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	sum, err := app.Run(t.Context(), o)
	if !errors.Is(err, app.ErrDaysFailed) || !errors.Is(err, exporter.ErrServerUnsupported) {
		t.Fatalf("Run error = %v, want ErrDaysFailed wrapping ErrServerUnsupported", err)
	}
	if got := src.fetchedDays(); len(got) != 1 {
		t.Errorf("fetched %v, want only the first day", dates(got))
	}
	if f := sum.Failed(); len(f) != len(days) {
		t.Errorf("%d days failed, want %d", len(f), len(days))
	}
	for _, f := range sum.Failed() {
		if !errors.Is(f.Err, exporter.ErrServerUnsupported) {
			t.Errorf("day %s failed with %v, want the server's error", f.Day.Format(time.DateOnly), f.Err)
		}
	}
	if l := logs.String(); strings.Contains(l, "retried by the next run") || !strings.Contains(l, "so the run stops") {
		t.Errorf("logs:\n%s", l)
	}
}
