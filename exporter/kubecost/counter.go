package kubecost

import "sync"

var (
	_ Observer     = (*Counter)(nil)
	_ IdleObserver = (*Counter)(nil)
)

// Counter is an Observer that counts requests by outcome, and days without idle (IdleObserver),
// for the metrics, which so need not know the client. The zero value is ready to use.
type Counter struct {
	mu     sync.Mutex
	counts map[Outcome]int64
	noIdle int64
}

// ObserveRequest implements Observer.
func (c *Counter) ObserveRequest(o Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[Outcome]int64{}
	}
	c.counts[o]++
}

// ObserveDayWithoutIdle implements IdleObserver.
func (c *Counter) ObserveDayWithoutIdle() {
	c.mu.Lock()
	c.noIdle++
	c.mu.Unlock()
}

// Counts returns the requests by outcome, every outcome of Outcomes listed, zero or not.
func (c *Counter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(Outcomes()))
	for _, o := range Outcomes() {
		out[string(o)] = c.counts[o]
	}
	return out
}

// DaysWithoutIdle returns how many days came back with allocations but no idle row.
func (c *Counter) DaysWithoutIdle() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.noIdle
}
