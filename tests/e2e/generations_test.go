package e2e_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// The exporter against each Kubecost generation as a user reaches it,
// into MinIO. 1.x and 2.x answer alike (the simulator's Kubecost mode: a
// cost-analyzer service whose frontend serves /model/allocation, a
// cost-model container serving /allocation on 9003); 3.x is the
// simulator's 3.x mode (a frontend proxying /model/ to the aggregator).
// Where the test leaves KUBECOST_API_ENDPOINT unset, the run discovers
// the server by the names the charts give their services
// (kubecost.Candidates), resolved by clusterDNS to the local servers.

// clusterDNS is the cluster's DNS for discovery: each candidate URL
// kubecost.Candidates names is replaced by the local server registered
// under it, or by an address where nothing listens (a name that does not
// exist in this cluster). The names themselves are the real ones.
func clusterDNS(t *testing.T, names map[string]string) func(ns, release string) []kubecost.Candidate {
	return func(ns, release string) []kubecost.Candidate {
		cs := kubecost.Candidates(ns, release)
		for i := range cs {
			if u, ok := names[cs[i].URL]; ok {
				cs[i].URL = u
			} else {
				cs[i].URL = "http://" + closedAddr(t)
			}
		}
		return cs
	}
}

// runHooks is harness.run with discovery's candidates replaced.
func (h *harness) runHooks(extra map[string]string, cands func(ns, release string) []kubecost.Candidate) (int, string) {
	h.t.Helper()
	env := maps.Clone(h.env)
	maps.Copy(env, extra)
	var buf bytes.Buffer
	code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		&buf, cli.Hooks{Now: h.now, Candidates: cands})
	h.logs.Write(buf.Bytes())
	return code, buf.String()
}

// gen3Config is the harness's simulated cluster, for a 3.x server.
func (h *harness) gen3(g kubecostsim.Gen3Config) *kubecostsim.Gen3Server {
	s := kubecostsim.NewGen3Server(kubecostsim.Config{Seed: 7, RetentionDays: 15, Now: h.now}, g)
	h.t.Cleanup(s.Close)
	// The truth is the same cluster's: checkFile reads h.sim.
	h.sim = &kubecostsim.Server{Server: s.Aggregator, Sim: s.Sim}
	return s
}

// exported checks that the run wrote every expected day, each holding
// the simulator's rows.
func exported(t *testing.T, h *harness, logs string) {
	t.Helper()
	want := expectedDays(h.sim, 20)
	var got []string
	for k := range h.objects() {
		if _, ok := prod.ParseDay(k); ok {
			got = append(got, k)
		}
	}
	slices.Sort(got)
	var wantKeys []string
	for _, d := range want {
		wantKeys = append(wantKeys, prod.Key(d, exporter.Snappy))
	}
	if len(want) == 0 || !slices.Equal(got, wantKeys) {
		t.Fatalf("wrote %v, want %v\n%s", got, wantKeys, logs)
	}
	assertSummary(t, logs, len(want), len(want))
	proj := schema.NewProjection(clusterARN, "prod", []string{labelKey}, nil)
	checkFile(t, h, proj, want[0])
	checkFile(t, h, proj, want[len(want)-1])
}

func TestGenerationsEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup starts the server, returns the run's extra settings, the
		// cluster's DNS names and what the log must say was found.
		setup func(t *testing.T, h *harness) (env, dns map[string]string, found string)
		path  string // the path the simulated API was asked
	}{
		{"1.x discovered: cost-analyzer /model/allocation", func(t *testing.T, h *harness) (map[string]string, map[string]string, string) {
			return map[string]string{"KUBECOST_API_ENDPOINT": ""},
				map[string]string{"http://kubecost-cost-analyzer.kubecost:9090": h.sim.URL}, h.sim.URL
		}, "/model/allocation"},
		{"1.x/2.x cost-model container :9003/allocation", func(t *testing.T, h *harness) (map[string]string, map[string]string, string) {
			return map[string]string{"KUBECOST_API_FLAVOR": "cost-model"}, nil, ""
		}, "/allocation"},
		{"2.x discovered: release named like the chart", func(t *testing.T, h *harness) (map[string]string, map[string]string, string) {
			// Chart 2.x names the service after the release alone when the
			// release holds "cost-analyzer" (cost-analyzer.serviceName).
			return map[string]string{"KUBECOST_API_ENDPOINT": "", "KUBECOST_NAMESPACE": "finops", "KUBECOST_RELEASE": "cost-analyzer"},
				map[string]string{"http://cost-analyzer.finops:9090": h.sim.URL}, h.sim.URL
		}, "/model/allocation"},
		{"3.x discovered: frontend /model/ to the aggregator", func(t *testing.T, h *harness) (map[string]string, map[string]string, string) {
			g := h.gen3(kubecostsim.Gen3Config{})
			return map[string]string{"KUBECOST_API_ENDPOINT": ""},
				map[string]string{"http://kubecost-frontend.kubecost:9090": g.URL}, g.URL
		}, "/allocation"},
		{"3.x aggregator :9004/allocation, cost-model flavour", func(t *testing.T, h *harness) (map[string]string, map[string]string, string) {
			g := h.gen3(kubecostsim.Gen3Config{})
			return map[string]string{"KUBECOST_API_ENDPOINT": g.Aggregator.URL, "KUBECOST_API_FLAVOR": "cost-model"}, nil, ""
		}, "/allocation"},
		{"3.x with SSO: headers file, discovered", func(t *testing.T, h *harness) (map[string]string, map[string]string, string) {
			g := h.gen3(kubecostsim.Gen3Config{RequireHeader: "X-API-KEY: e2e-s3cr3t"})
			file := filepath.Join(t.TempDir(), "headers")
			if err := os.WriteFile(file, []byte("# Kubecost service account\nX-API-KEY: e2e-s3cr3t\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return map[string]string{"KUBECOST_API_ENDPOINT": "", "KUBECOST_HTTP_HEADERS_FILE": file},
				map[string]string{"http://kubecost-frontend.kubecost:9090": g.URL}, g.URL
		}, "/allocation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			env, dns, found := tc.setup(t, h)
			code, logs := h.runHooks(env, clusterDNS(t, dns))
			if code != cli.ExitOK {
				t.Fatalf("exit %d\n%s", code, logs)
			}
			exported(t, h, logs)
			if found != "" && !strings.Contains(logs, `"msg":"found Kubecost","endpoint":"`+found+`"`) {
				t.Errorf("the discovered endpoint %s is not logged\n%s", found, logs)
			}
			if strings.Contains(logs, "e2e-s3cr3t") {
				t.Errorf("a header value is in the logs")
			}
			reqs := h.sim.Sim.Requests()
			for _, r := range reqs {
				if r.Path != tc.path {
					t.Fatalf("the API was asked %s, want %s", r.Path, tc.path)
				}
				if env["KUBECOST_HTTP_HEADERS_FILE"] != "" && r.Header.Get("X-Api-Key") != "e2e-s3cr3t" {
					t.Fatalf("a request without the header: %v", r.Query)
				}
			}
		})
	}
}

// TestDiscoveryNothingAnswers: with no endpoint set and no Kubecost at
// any of the chart's names, the run fails at once with one error naming
// every URL tried and what it answered.
func TestDiscoveryNothingAnswers(t *testing.T) {
	h := newHarness(t)
	notFound := h.gen3(kubecostsim.Gen3Config{}).Aggregator.URL // answers 404 to /model/allocation
	var tried []string
	dns := func(ns, release string) []kubecost.Candidate {
		cs := clusterDNS(t, map[string]string{"http://kubecost-cost-analyzer.kubecost:9090": notFound})(ns, release)
		for _, c := range cs {
			tried = append(tried, c.URL+"/model/allocation")
		}
		return cs
	}
	code, logs := h.runHooks(map[string]string{"KUBECOST_API_ENDPOINT": ""}, dns)
	if code != cli.ExitRuntime {
		t.Fatalf("exit %d, want %d\n%s", code, cli.ExitRuntime, logs)
	}
	var line string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "cannot start") {
			line = l
		}
	}
	for _, want := range append(tried, "connection refused", "HTTP 404", kubecost.KindFrontend3, kubecost.KindCostAnalyzer, "KUBECOST_NAMESPACE") {
		if !strings.Contains(line, want) {
			t.Errorf("the error lacks %q: %s", want, line)
		}
	}
	if len(tried) != 2 || len(h.sim.Sim.Requests()) != 0 || len(h.objects()) != 0 {
		t.Errorf("tried %v; %d requests reached the API, %d objects written", tried, len(h.sim.Sim.Requests()), len(h.objects()))
	}
}

// TestGen3Credentials: an SSO-enabled 3.x without the header fails with
// the 401 naming KUBECOST_HTTP_HEADERS_FILE; with a wrong one, 403.
func TestGen3Credentials(t *testing.T) {
	h := newHarness(t)
	g := h.gen3(kubecostsim.Gen3Config{RequireHeader: "X-API-KEY: right"})
	file := filepath.Join(t.TempDir(), "headers")
	if err := os.WriteFile(file, []byte("X-API-KEY: wr0ng-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"KUBECOST_API_ENDPOINT": g.URL}, "401 Unauthorized"},
		{map[string]string{"KUBECOST_API_ENDPOINT": g.URL, "KUBECOST_HTTP_HEADERS_FILE": file}, "403 Forbidden"},
	} {
		code, logs := h.runHooks(tc.env, nil)
		if code != cli.ExitRuntime || !strings.Contains(logs, tc.want) || !strings.Contains(logs, "KUBECOST_HTTP_HEADERS_FILE") {
			t.Errorf("exit %d, want %d and %s naming KUBECOST_HTTP_HEADERS_FILE\n%s", code, cli.ExitRuntime, tc.want, logs)
		}
		if strings.Contains(logs, "wr0ng-value") {
			t.Errorf("the header value is logged")
		}
	}
}

// TestGen3ProxyTimeoutSplitsHours: the 3.x frontend cuts every day's
// hourly query with a 504 (the aggregator needs 1.44 s for a day, the
// proxy waits 1 s: frontend.timeoutSeconds scaled down); the exporter
// splits each day into halves at once and exports every day whole.
func TestGen3ProxyTimeoutSplitsHours(t *testing.T) {
	h := newHarness(t)
	g := h.gen3(kubecostsim.Gen3Config{Timeout: time.Second, ComputePerHour: 60 * time.Millisecond})
	code, logs := h.runHooks(map[string]string{
		"KUBECOST_API_ENDPOINT": g.URL, "GRANULARITY": "hourly", "BACKFILL_PERIOD_DAYS": "5", "KUBECOST_MAX_RETRIES": "4",
	}, nil)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	days := expectedDays(h.sim, 5)
	if len(days) != 2 || len(h.objects()) != 2 {
		t.Fatalf("expected days %v, objects %v", days, h.objects())
	}
	if g.Cut() != len(days) || strings.Count(logs, "kubecost window failed, splitting it") != len(days) ||
		strings.Contains(logs, "retrying") {
		t.Errorf("%d answers cut for %d days; want each day cut once and split at once, never retried whole\n%s", g.Cut(), len(days), logs)
	}
	assertSummary(t, logs, len(days), len(days))
}
