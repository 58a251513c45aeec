package kubecostsim

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestGen3Paths: the frontend strips /model/ and reaches the aggregator's
// /allocation, whose answer is the same bytes; the aggregator itself has
// no /model/ prefix; the frontend's other paths are the UI, and its
// /healthz is nginx's own.
func TestGen3Paths(t *testing.T) {
	s := NewGen3Server(testConfig(), Gen3Config{})
	defer s.Close()
	c := http.DefaultClient
	resp, viaFrontend, err := get(t, c, s.URL, "/model/allocation", dayQuery())
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("frontend /model/allocation: %v %v", err, resp)
	}
	resp, direct, err := get(t, c, s.Aggregator.URL, "/allocation", dayQuery())
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("aggregator /allocation: %v %v", err, resp)
	}
	if !bytes.Equal(viaFrontend, direct) || len(direct) < 100 {
		t.Errorf("the frontend's answer (%d bytes) is not the aggregator's (%d bytes)", len(viaFrontend), len(direct))
	}
	reqs := s.Sim.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/allocation" || reqs[1].Path != "/allocation" {
		t.Errorf("the aggregator saw %+v, want /allocation twice (the prefix stripped)", reqs)
	}
	if resp, _, _ := get(t, c, s.Aggregator.URL, "/model/allocation", dayQuery()); resp.StatusCode != 404 {
		t.Errorf("aggregator /model/allocation: %d, want 404", resp.StatusCode)
	}
	if resp, body, _ := get(t, c, s.URL, "/allocation", dayQuery()); resp.StatusCode != 200 ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !bytes.Contains(body, []byte("<html")) {
		t.Errorf("frontend /allocation: %d %q, want the UI's index.html", resp.StatusCode, body)
	}
	if resp, body, _ := get(t, c, s.URL, "/healthz", nil); resp.StatusCode != 200 || string(body) != "healthy\n" {
		t.Errorf("frontend /healthz: %d %q", resp.StatusCode, body)
	}
}

// TestGen3RequiredHeader: with SSO on, the API answers 401 without the
// credential and 403 with a wrong one, through the frontend as well.
func TestGen3RequiredHeader(t *testing.T) {
	s := NewGen3Server(testConfig(), Gen3Config{RequireHeader: "X-API-KEY: s3cr3t"})
	defer s.Close()
	for _, tc := range []struct {
		header string
		want   int
	}{{"", 401}, {"wrong", 403}, {"s3cr3t", 200}} {
		req, _ := http.NewRequest("GET", s.URL+"/model/allocation?"+dayQuery().Encode(), nil)
		if tc.header != "" {
			req.Header.Set("x-api-key", tc.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("X-API-KEY %q: HTTP %d, want %d", tc.header, resp.StatusCode, tc.want)
		}
	}
}

// TestGen3Timeout: an answer slower than proxy_read_timeout is cut with
// the frontend's HTML 504; a smaller window, computed in time, is not.
func TestGen3Timeout(t *testing.T) {
	s := NewGen3Server(testConfig(), Gen3Config{Timeout: 300 * time.Millisecond, ComputePerHour: 40 * time.Millisecond})
	defer s.Close()
	const containers = "cluster,node,namespace,pod,container"
	resp, body, err := get(t, http.DefaultClient, s.URL, "/model/allocation", qv(day(17), day(18), "1d", containers))
	if err != nil || resp.StatusCode != http.StatusGatewayTimeout || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("a day (24 × 40 ms) behind a 300 ms timeout: %v %v %q, want an HTML 504", err, resp, body)
	}
	if s.Cut() != 1 {
		t.Errorf("Cut() = %d, want 1", s.Cut())
	}
	resp, _, err = get(t, http.DefaultClient, s.URL, "/model/allocation", qv(day(17), day(17).Add(2*time.Hour), "1h", containers))
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("two hours (80 ms): %v %v, want 200", err, resp)
	}
	// Cluster totals are cheap: a day of them is not slowed.
	if resp, _, err = get(t, http.DefaultClient, s.URL, "/model/allocation", dayQuery()); err != nil || resp.StatusCode != 200 {
		t.Errorf("a day of cluster totals: %v %v, want 200", err, resp)
	}
	// The aggregator itself has no time limit: asked directly, the day comes.
	if resp, _, err = get(t, http.DefaultClient, s.Aggregator.URL, "/allocation", qv(day(17), day(18), "1d", containers)); err != nil || resp.StatusCode != 200 {
		t.Errorf("aggregator directly: %v %v, want 200", err, resp)
	}
}

// TestGen3UpstreamDown: an aggregator that is gone is nginx's 502.
func TestGen3UpstreamDown(t *testing.T) {
	s := NewGen3Server(testConfig(), Gen3Config{})
	defer s.Close()
	s.Aggregator.Close()
	resp, _, err := get(t, http.DefaultClient, s.URL, "/model/allocation", dayQuery())
	if err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("%v %v, want 502", err, resp)
	}
}

// TestGen3CutsStalledBody: proxy_read_timeout is between two reads, so an
// upstream that pauses longer inside a body has the client's connection
// cut: the client sees a short body and an error, not a clean end.
func TestGen3CutsStalledBody(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"code":200,"data":[`)
		http.NewResponseController(w).Flush()
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `null]}`)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	front := httptest.NewServer(NewGen3Frontend(u, Gen3Config{Timeout: 200 * time.Millisecond}))
	defer front.Close()
	resp, body, err := get(t, http.DefaultClient, front.URL, "/model/allocation", dayQuery())
	if err == nil || resp.StatusCode != 200 || string(body) != `{"code":200,"data":[` {
		t.Fatalf("status %v, body %q, err %v: want the start of the body, then a broken connection", resp, body, err)
	}
}
