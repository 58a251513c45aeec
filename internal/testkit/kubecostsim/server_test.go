package kubecostsim

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func get(t *testing.T, c *http.Client, base, path string, v url.Values) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := c.Get(base + path + "?" + v.Encode())
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

func mustGet(t *testing.T, srv *Server, v url.Values) (*http.Response, []byte) {
	t.Helper()
	resp, body, err := get(t, srv.Client(), srv.URL, "/model/allocation", v)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func dayQuery() url.Values { return qv(day(17), day(18), "1d", "cluster") }

func TestServerPathsAndRecording(t *testing.T) {
	srv := NewServer(testConfig())
	defer srv.Close()
	var wg sync.WaitGroup
	paths := []string{"/model/allocation", "/allocation", "/model/allocation"}
	bodies := make([][]byte, len(paths))
	for i, p := range paths {
		wg.Go(func() {
			resp, body, err := get(t, srv.Client(), srv.URL, p, dayQuery())
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("%s: %v %v", p, err, resp)
			}
			bodies[i] = body
		})
	}
	wg.Wait()
	for i := range bodies {
		if !bytes.Equal(bodies[i], bodies[0]) || len(decodeRaw(t, bodies[i]).Data) != 1 {
			t.Errorf("%s answers differently", paths[i])
		}
	}
	reqs := srv.Sim.Requests()
	if len(reqs) != 3 {
		t.Fatalf("recorded %d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Method != "GET" || r.Query.Get("aggregate") != "cluster" || r.Query.Get("step") != "1d" || r.Query.Get("accumulate") != "false" {
			t.Errorf("recorded %+v", r)
		}
	}
	srv.Sim.ResetRequests()
	if resp, _, _ := get(t, srv.Client(), srv.URL, "/nope", nil); resp.StatusCode != 404 || len(srv.Sim.Requests()) != 0 {
		t.Errorf("unknown path: %d, recorded %d", resp.StatusCode, len(srv.Sim.Requests()))
	}
	resp, body := mustGet(t, srv, url.Values{"window": {"bad"}})
	var e struct {
		Code    int
		Message string
	}
	if json.Unmarshal(body, &e); resp.StatusCode != 400 || e.Code != 400 || !strings.Contains(e.Message, "window") {
		t.Errorf("bad window: %d %s", resp.StatusCode, body)
	}
}

func TestFaultStatus(t *testing.T) {
	srv := NewServer(testConfig())
	defer srv.Close()
	srv.Sim.SetFaults(Faults{Mode: FaultStatus, Times: 2, Status: 503, RetryAfter: 1500 * time.Millisecond})
	for i := range 2 {
		resp, body := mustGet(t, srv, dayQuery())
		var e struct {
			Code    int
			Message string
		}
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 503 || e.Code != 503 || e.Message == "" {
			t.Errorf("request %d: %d %s", i, resp.StatusCode, body)
		}
		if ra := resp.Header.Get("Retry-After"); ra != "2" {
			t.Errorf("Retry-After %q", ra)
		}
	}
	if resp, _ := mustGet(t, srv, dayQuery()); resp.StatusCode != 200 {
		t.Errorf("third request: %d", resp.StatusCode)
	}
	if f := srv.Sim.Faults(); f.Mode != FaultNone || f.Times != 0 {
		t.Errorf("faults not cleared: %+v", f)
	}
	srv.Sim.SetFaults(Faults{Mode: FaultStatus, Status: 502, ErrorStyle: ErrorPlain})
	for range 3 { // Times 0: until changed
		resp, body := mustGet(t, srv, dayQuery())
		var e struct{ Error string }
		if json.Unmarshal(body, &e); resp.StatusCode != 502 || e.Error == "" || resp.Header.Get("Retry-After") != "" {
			t.Errorf("plain error: %d %s", resp.StatusCode, body)
		}
	}
	srv.Sim.FailNext(1, 500)
	if resp, _ := mustGet(t, srv, dayQuery()); resp.StatusCode != 500 {
		t.Errorf("FailNext: %d", resp.StatusCode)
	}
	if resp, _ := mustGet(t, srv, dayQuery()); resp.StatusCode != 200 {
		t.Errorf("after FailNext: %d", resp.StatusCode)
	}
	if n := len(srv.Sim.Requests()); n != 8 {
		t.Errorf("recorded %d requests, want 8 (failed ones too)", n)
	}
}

func TestFaultBodies(t *testing.T) {
	srv := NewServer(testConfig())
	defer srv.Close()
	var v any
	srv.Sim.SetFaults(Faults{Mode: FaultHTML, Times: 1})
	resp, body := mustGet(t, srv, dayQuery())
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !bytes.Contains(body, []byte("<html>")) || json.Unmarshal(body, &v) == nil {
		t.Errorf("html: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	srv.Sim.SetFaults(Faults{Mode: FaultInvalidJSON, Times: 1})
	if resp, body = mustGet(t, srv, dayQuery()); resp.StatusCode != 200 || json.Unmarshal(body, &v) == nil {
		t.Errorf("invalid JSON decoded: %s", body)
	}
	srv.Sim.SetFaults(Faults{Mode: FaultNullData, Times: 1})
	if _, body = mustGet(t, srv, dayQuery()); strings.TrimSpace(string(body)) != `{"code":200,"data":[null]}` {
		t.Errorf("null data: %s", body)
	}
	if resp, body = mustGet(t, srv, dayQuery()); resp.StatusCode != 200 || decodeRaw(t, body).Data[0] == nil {
		t.Errorf("faults did not clear: %s", body)
	}
}

func TestFaultTruncate(t *testing.T) {
	srv := NewServer(testConfig())
	defer srv.Close()
	v := qv(day(17), day(18), "1h", containerAgg)
	_, full := mustGet(t, srv, v)
	srv.Sim.SetFaults(Faults{Mode: FaultTruncate, TruncateAfter: 5000, Times: 1})
	resp, body, err := get(t, srv.Client(), srv.URL, "/model/allocation", v)
	if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) || resp.StatusCode != 200 {
		t.Errorf("truncated body read: err %v", err)
	}
	if len(body) != 5000 || !bytes.Equal(body, full[:5000]) {
		t.Errorf("got %d bytes, want the first 5000 of %d", len(body), len(full))
	}
	if _, again := mustGet(t, srv, v); !bytes.Equal(again, full) {
		t.Error("next response is not whole")
	}
}

func TestFaultDelayAndMaxWindow(t *testing.T) {
	srv := NewServer(testConfig())
	srv.Sim.SetFaults(Faults{Delay: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/allocation?"+dayQuery().Encode(), nil)
	start := time.Now()
	if _, err := srv.Client().Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("delayed request: %v", err)
	}
	// Close waits for handlers: it returns quickly only if the delay honours cancellation.
	srv.Close()
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("handler kept sleeping after the client left: %v", el)
	}

	srv = NewServer(testConfig())
	defer srv.Close()
	srv.Sim.SetFaults(Faults{MaxWindowHours: 48, Delay: 20 * time.Millisecond})
	start = time.Now()
	if resp, _ := mustGet(t, srv, qv(day(16), day(18), "1d", "cluster")); resp.StatusCode != 200 || time.Since(start) < 20*time.Millisecond {
		t.Errorf("48h window: %d after %v", resp.StatusCode, time.Since(start))
	}
	resp, body := mustGet(t, srv, qv(day(15), day(18), "1d", "cluster"))
	if resp.StatusCode != 500 || !bytes.Contains(body, []byte(`"code":500`)) {
		t.Errorf("72h window: %d %s", resp.StatusCode, body)
	}
}

func TestTLSAndPrerendered(t *testing.T) {
	caPEM, cert, err := GenerateCert()
	if err != nil {
		t.Fatal(err)
	}
	srv := NewTLSServer(testConfig(), &tls.Config{Certificates: []tls.Certificate{cert}})
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("URL %s", srv.URL)
	}
	resp, body, err := get(t, client, srv.URL, "/model/allocation", dayQuery())
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("TLS with private CA: %v", err)
	}
	if _, _, err := get(t, &http.Client{}, srv.URL, "/model/allocation", dayQuery()); err == nil {
		t.Error("client without the CA trusted the server")
	}

	file := filepath.Join(t.TempDir(), "day.json")
	if err := os.WriteFile(file, []byte(`{"code":200,"data":[{"pre":{}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	v := dayQuery()
	srv.Sim.AddPrerendered(v, file)
	shuffled := "step=1d&window=" + url.QueryEscape(v.Get("window")) + "&idle=false&accumulate=false&aggregate=cluster"
	r2, err := client.Get(srv.URL + "/model/allocation?" + shuffled)
	if err != nil {
		t.Fatal(err)
	}
	pre, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if string(pre) != `{"code":200,"data":[{"pre":{}}]}` {
		t.Errorf("prerendered: %s", pre)
	}
	if _, other, _ := get(t, client, srv.URL, "/model/allocation", qv(day(16), day(17), "1d", "cluster")); bytes.Equal(other, pre) || len(other) == 0 || bytes.Equal(other, body) {
		t.Error("another query got the pre-rendered body or the wrong day")
	}
}

// TestFlavorParameters: each simulated server reads only its own
// parameter names, as the real ones do. OpenCost ignores Kubecost's idle,
// splitIdle and idleByNode, so a client sending those gets no idle cost at
// all; with includeIdle it gets one "__idle__" per set, never split by node.
func TestFlavorParameters(t *testing.T) {
	d := day(17)
	idleRows := func(s *Sim, extra ...string) (idle, sets int) {
		t.Helper()
		for _, set := range decodeSets(t, render(t, s, qv(d, d.AddDate(0, 0, 1), "1h", containerAgg, extra...))) {
			sets++
			for name := range set {
				if strings.HasSuffix(name, "__idle__") {
					idle++
				}
			}
		}
		return idle, sets
	}
	kubecostParams := []string{"idle", "true", "splitIdle", "true", "idleByNode", "true", "shareTenancyCosts", "true"}
	cfg := testConfig()
	cfg.Flavor = FlavorOpenCost
	oc := New(cfg)
	if idle, _ := idleRows(oc, kubecostParams...); idle != 0 {
		t.Errorf("opencost with Kubecost's parameters: %d idle allocations, want 0 (ignored)", idle)
	}
	if idle, sets := idleRows(oc, "includeIdle", "true", "idleByNode", "true"); idle != sets || sets != 24 {
		t.Errorf("opencost includeIdle: %d idle allocations in %d sets, want one per set", idle, sets)
	}
	kc := New(testConfig())
	if idle, _ := idleRows(kc, "idle", "false", "includeIdle", "true"); idle != 0 {
		t.Errorf("kubecost with includeIdle: %d idle allocations, want 0 (ignored)", idle)
	}
	if idle, sets := idleRows(kc, kubecostParams...); idle != sets*kc.Config().Nodes {
		t.Errorf("kubecost split by node: %d idle allocations in %d sets, want one per node and set", idle, sets)
	}
	if idle, sets := idleRows(kc, "idle", ""); idle != sets {
		t.Errorf("kubecost default: %d idle allocations in %d sets, want idle included, one per set", idle, sets)
	}

	srv := httptest.NewServer(oc)
	defer srv.Close()
	for path, want := range map[string]int{"/allocation/compute": 200, "/allocation": 200, "/model/allocation": 404} {
		resp, _, err := get(t, srv.Client(), srv.URL, path, dayQuery())
		if err != nil || resp.StatusCode != want {
			t.Errorf("opencost %s: %v %v, want %d", path, err, resp, want)
		}
	}
}

// TestDayCostFactorEndpoint: the simulator command's control path for
// SetDayCostFactor, and its input checks.
func TestDayCostFactorEndpoint(t *testing.T) {
	srv := NewServer(testConfig())
	defer srv.Close()
	total := func() float64 {
		tr, err := srv.Sim.Truth(day(16), 24*time.Hour, "cluster")
		if err != nil {
			t.Fatal(err)
		}
		return tr.TotalCost
	}
	before := total()
	post := func(q string) int {
		resp, err := srv.Client().Post(srv.URL+"/sim/day-cost-factor?"+q, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, bad := range []string{"day=2026-11-16", "day=16-11-2026&factor=1.01", "day=2026-11-16&factor=0", "day=2026-11-16&factor=x"} {
		if code := post(bad); code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", bad, code)
		}
	}
	if code := post("day=2026-11-16&factor=1.01"); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if got := total(); math.Abs(got/before-1.01) > 1e-9 {
		t.Errorf("total %v after x1.01, was %v", got, before)
	}
	if resp, err := srv.Client().Get(srv.URL + "/sim/day-cost-factor?day=2026-11-16&factor=2"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v, want 405", resp, err)
	}
}
