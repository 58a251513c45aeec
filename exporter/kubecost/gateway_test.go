package kubecost

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// slowGen3 is a Kubecost 3.x whose aggregator needs 1.33 × the frontend's
// timeout for a day and 0.67 × for half a day.
func slowGen3(t *testing.T) *kubecostsim.Gen3Server {
	srv := kubecostsim.NewGen3Server(simConfig(), kubecostsim.Gen3Config{
		Timeout: 600 * time.Millisecond, ComputePerHour: 600 * time.Millisecond / 18,
	})
	t.Cleanup(srv.Close)
	return srv
}

// TestGatewayTimeoutSplitsAtOnce: the 3.x frontend cuts the day's query
// with a 504; the client splits the day into halves at once, without
// asking the whole day again (each retry would wait out the proxy's limit
// again), and the rows are the day's.
func TestGatewayTimeoutSplitsAtOnce(t *testing.T) {
	srv := slowGen3(t)
	ref := newSim(t, simConfig())
	c, _ := newClient(t, ref.URL+"/model/allocation", nil)
	var want memSink
	if err := c.FetchDay(context.Background(), testDay, &want); err != nil {
		t.Fatal(err)
	}

	c, logs := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Retries = 3 })
	var got memSink
	st, err := c.FetchDayStats(context.Background(), testDay, &got)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Cut() != 1 || st.Splits != 1 || st.Retries != 0 || st.Requests != 3 {
		t.Errorf("frontend cut %d answers; stats %+v: want 1 cut, 1 split, 0 retries, 3 requests", srv.Cut(), st)
	}
	if l := logs.String(); !strings.Contains(l, "splitting") || !strings.Contains(l, "504") {
		t.Errorf("the split is not logged with the 504:\n%s", l)
	}
	sameRows(t, &want, &got)
	checkTruth(t, srv.Sim, time.Hour, &got)
}

// TestGatewayTimeoutDaily: a daily query cannot be split; after its
// retries the error says what to change, naming the frontend's limit.
func TestGatewayTimeoutDaily(t *testing.T) {
	srv := slowGen3(t)
	c, _ := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Step = 24 * time.Hour; o.Retries = 1 })
	st, err := c.FetchDayStats(context.Background(), testDay, &memSink{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"504", "frontend.timeoutSeconds", "300 s", "GRANULARITY=hourly", ":9004"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if st.Splits != 0 || st.Requests != 2 || srv.Cut() != 2 {
		t.Errorf("stats %+v, %d cut: a daily window is retried, never split", st, srv.Cut())
	}
}
