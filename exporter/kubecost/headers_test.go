package kubecost

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// TestHeadersSentAndRefusals: the headers reach the 3.x aggregator
// through the frontend on every request (availability and days); without
// them the error is a 401 naming the setting, with a wrong value a 403
// naming it, and no error shows the value, even when the server echoes it.
func TestHeadersSentAndRefusals(t *testing.T) {
	srv := kubecostsim.NewGen3Server(simConfig(), kubecostsim.Gen3Config{RequireHeader: "X-API-KEY: right-k3y"})
	t.Cleanup(srv.Close)
	h := http.Header{"X-Api-Key": {"right-k3y"}}
	c, logs := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Headers = h })
	if _, err := c.AvailableDays(context.Background(), testDay, testDay.AddDate(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := c.FetchDay(context.Background(), testDay, &sink); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Sim.Requests()
	for _, r := range reqs {
		if r.Header.Get("X-Api-Key") != "right-k3y" {
			t.Errorf("request %s without the header", r.Query.Get("window"))
		}
	}
	if len(reqs) < 2 || len(sink.rows) == 0 {
		t.Fatalf("%d requests, %d rows", len(reqs), len(sink.rows))
	}
	if strings.Contains(logs.String(), "right-k3y") {
		t.Errorf("the header value is logged:\n%s", logs.String())
	}

	for _, tc := range []struct {
		headers http.Header
		want    string
	}{
		{nil, "401 Unauthorized"},
		{http.Header{"X-Api-Key": {"wrong-k3y"}}, "403 Forbidden"},
	} {
		c, _ := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Headers = tc.headers })
		err := c.FetchDay(context.Background(), testDay, &memSink{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), exporter.HeadersSetting) {
			t.Errorf("headers %v: error %v, want %s naming %s", tc.headers, err, tc.want, exporter.HeadersSetting)
		}
	}

	// A server that echoes the refused key in its message.
	echo := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"code":403,"message":"invalid API key ` + r.Header.Get("X-Api-Key") + `"}`))
	})
	c, _ = newClient(t, echo.URL, func(o *Options) { o.Headers = http.Header{"X-Api-Key": {"leaky-k3y"}} })
	err := c.FetchDay(context.Background(), testDay, &memSink{})
	if err == nil || strings.Contains(err.Error(), "leaky-k3y") || !strings.Contains(err.Error(), "invalid API key REDACTED") {
		t.Errorf("echoed key: %v", err)
	}
}

func TestHeadersAndBearerConflict(t *testing.T) {
	_, err := New(Options{URL: "http://x/model/allocation", Aggregate: "cluster", Step: time.Hour,
		Projection: testProjection(), BearerToken: "t", Headers: http.Header{"Authorization": {"Basic x"}}})
	if err == nil || !strings.Contains(err.Error(), exporter.HeadersSetting) {
		t.Errorf("error %v", err)
	}
}
