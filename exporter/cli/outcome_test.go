package cli

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// TestReasonKeepsHeadAndCause: a long wrapped error keeps, within the
// limit, the beginning that says what failed and the innermost cause, even
// when a hint follows the cause.
func TestReasonKeepsHeadAndCause(t *testing.T) {
	cause := syscall.ECONNREFUSED
	err := fmt.Errorf("fetch: %w", fmt.Errorf("kubecost: get 2026-11-02T00:00:00Z,2026-11-03T00:00:00Z: %w (after 4 retries; a daily query "+
		"cannot be split without changing the rows: set GRANULARITY=hourly with KUBECOST_ALLOCATION_API_PAGINATE=true to query one hour at a time)",
		fmt.Errorf("Get \"http://u:pw@kubecost:9090/model/allocation?window=x\": dial tcp 10.0.0.1:9090: %w", cause)))
	for _, n := range []int{60, 90, 150} {
		got := reason(err, n)
		if len(got) > n+2 {
			t.Errorf("n=%d: %d bytes: %q", n, len(got), got)
		}
		if !strings.HasPrefix(got, "fetch: kubecost: get") || !strings.HasSuffix(got, cause.Error()) || !strings.Contains(got, " ... ") {
			t.Errorf("n=%d: %q lacks the head or the cause", n, got)
		}
		if strings.Contains(got, "pw@") {
			t.Errorf("n=%d: password in %q", n, got)
		}
	}
	// Short errors stay whole; a joined error's cause is its first branch's.
	if got := reason(errors.New("boom"), 90); got != "boom" {
		t.Errorf("short: %q", got)
	}
	j := errors.Join(fmt.Errorf("plan: %w", errors.New(strings.Repeat("x", 200)+" root")), errors.New("second"))
	if got := exporter.Innermost(j).Error(); !strings.HasSuffix(got, " root") {
		t.Errorf("innermost of a joined error: %q", got)
	}
}
