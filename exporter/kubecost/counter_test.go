package kubecost

import "testing"

// TestCounter: every outcome is listed, zero or not, and days without idle
// are counted apart.
func TestCounter(t *testing.T) {
	var c Counter
	if got := c.Counts(); len(got) != len(Outcomes()) || got["ok"] != 0 {
		t.Errorf("zero Counter: %v, want every outcome at 0", got)
	}
	c.ObserveRequest(OutcomeOK)
	c.ObserveRequest(OutcomeOK)
	c.ObserveRequest(OutcomeSplit)
	c.ObserveDayWithoutIdle()
	got := c.Counts()
	if got["ok"] != 2 || got["split"] != 1 || got["retried"] != 0 || got["failed"] != 0 || c.DaysWithoutIdle() != 1 {
		t.Errorf("counts %v, days without idle %d; want ok 2, split 1, others 0, 1", got, c.DaysWithoutIdle())
	}
}
