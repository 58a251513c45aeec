package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// dayFaults routes the day fetches (aggregate=container) to a second
// simulator with the same seed, which carries the fault, and everything
// else (the available-days query) to the healthy one. So a fault hits the
// day data and not the planning.
func dayFaults(t *testing.T, h *harness, f kubecostsim.Faults) *kubecostsim.Sim {
	faulty := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 15, Faults: f})
	healthy, _ := url.Parse(h.sim.URL)
	bad, _ := url.Parse(faulty.URL)
	good, sick := httputil.NewSingleHostReverseProxy(healthy), httputil.NewSingleHostReverseProxy(bad)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("aggregate") == aggregate {
			sick.ServeHTTP(w, r)
			return
		}
		good.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	h.env["KUBECOST_API_ENDPOINT"] = front.URL
	return faulty.Sim
}

func (h *harness) keysUnder(prefix string) []string {
	var out []string
	for k := range h.objects() {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

func TestFaultyKubecost(t *testing.T) {
	h := newHarness(t)
	// Three days keep the runs short.
	h.env["BACKFILL_PERIOD_DAYS"] = "5"
	days := expectedDays(h.sim, 5)
	proj := schema.NewProjection(clusterARN, "prod", []string{labelKey}, nil)

	t.Run("HTML body: exit 1, clear error, no retry, nothing written", func(t *testing.T) {
		h.env["S3_PREFIX"] = "html/"
		faulty := dayFaults(t, h, kubecostsim.Faults{Mode: kubecostsim.FaultHTML})
		code, logs := h.run(nil)
		if code != cli.ExitRuntime {
			t.Fatalf("exit %d, want 1\n%s", code, logs)
		}
		for _, want := range []string{"text/html", "KUBECOST_API_ENDPOINT"} {
			if !strings.Contains(logs, want) {
				t.Errorf("logs do not mention %q:\n%s", want, logs)
			}
		}
		if n := len(faulty.Requests()); n != len(days) {
			t.Errorf("%d day requests for %d days: HTML must not be retried", n, len(days))
		}
		if k := h.keysUnder("html/"); len(k) != 0 {
			t.Errorf("objects written: %v", k)
		}
	})

	t.Run("503 then 200: retried, every day written", func(t *testing.T) {
		h.env["S3_PREFIX"] = "retry/"
		faulty := dayFaults(t, h, kubecostsim.Faults{Mode: kubecostsim.FaultStatus, Status: 503, Times: 1})
		code, logs := h.run(nil)
		if code != cli.ExitOK {
			t.Fatalf("exit %d\n%s", code, logs)
		}
		if !strings.Contains(logs, "503") {
			t.Errorf("the retry is not logged with its reason:\n%s", logs)
		}
		if n := len(faulty.Requests()); n != len(days)+1 {
			t.Errorf("%d day requests, want %d (one retry)", n, len(days)+1)
		}
		if k := h.keysUnder("retry/"); len(k) != len(days) {
			t.Errorf("%d objects, want %d", len(k), len(days))
		}
	})

	t.Run("truncated JSON once: retried, no duplicate rows", func(t *testing.T) {
		h.env["S3_PREFIX"] = "trunc1/"
		dayFaults(t, h, kubecostsim.Faults{Mode: kubecostsim.FaultTruncate, TruncateAfter: 20000, Times: 1})
		code, logs := h.run(nil)
		if code != cli.ExitOK {
			t.Fatalf("exit %d\n%s", code, logs)
		}
		l := prod
		l.Prefix = "trunc1/"
		for _, d := range days {
			f := checkKey(t, h, proj, l.Key(d, exporter.Snappy))
			if want := dayTruth(t, h, d).Count; f != int64(want) {
				t.Errorf("%s: %d rows, truth %d", d.Format(time.DateOnly), f, want)
			}
		}
	})

	t.Run("truncated JSON always: exit 1, no partial object", func(t *testing.T) {
		h.env["S3_PREFIX"] = "trunc/"
		dayFaults(t, h, kubecostsim.Faults{Mode: kubecostsim.FaultTruncate, TruncateAfter: 20000})
		code, logs := h.run(nil)
		if code != cli.ExitRuntime {
			t.Fatalf("exit %d, want 1\n%s", code, logs)
		}
		if k := h.keysUnder("trunc/"); len(k) != 0 {
			t.Errorf("partial objects written: %v", k)
		}
		// The next healthy run resumes and writes every day.
		h.env["KUBECOST_API_ENDPOINT"] = h.sim.URL
		if code, logs := h.run(nil); code != cli.ExitOK || len(h.keysUnder("trunc/")) != len(days) {
			t.Fatalf("healthy rerun: exit %d, %d objects\n%s", code, len(h.keysUnder("trunc/")), logs)
		}
	})

	t.Run(`{"code":200,"data":[null]}: nothing available, exit 0`, func(t *testing.T) {
		h.env["S3_PREFIX"] = "null/"
		h.sim.Sim.SetFaults(kubecostsim.Faults{Mode: kubecostsim.FaultNullData})
		defer h.sim.Sim.SetFaults(kubecostsim.Faults{})
		h.env["KUBECOST_API_ENDPOINT"] = h.sim.URL
		code, logs := h.run(nil)
		if code != cli.ExitOK || !strings.Contains(logs, "nothing available") {
			t.Fatalf("exit %d, want 0 and 'nothing available'\n%s", code, logs)
		}
		if k := h.keysUnder("null/"); len(k) != 0 {
			t.Errorf("objects written: %v", k)
		}
	})
}

// checkKey reads one object back with arrow-go, checks its columns and
// returns its row count.
func checkKey(t *testing.T, h *harness, proj *schema.Projection, key string) int64 {
	t.Helper()
	return checkBytes(t, h.get(key), proj)
}

func checkBytes(t *testing.T, b []byte, proj *schema.Projection) int64 {
	t.Helper()
	return pqcheck.Check(t, b, proj).NumRows
}
