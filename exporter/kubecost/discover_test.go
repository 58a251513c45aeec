package kubecost

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/syncbuf"
)

func TestCandidates(t *testing.T) {
	urls := func(cs []Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.URL+" "+c.Kind)
		}
		return out
	}
	long := strings.Repeat("r", 62) // + "-..." is cut to 63, then the "-" trimmed
	for _, tc := range []struct {
		ns, release string
		want        []string
	}{
		{"", "", []string{
			"http://kubecost-frontend.kubecost:9090 " + KindFrontend3,
			"http://kubecost-cost-analyzer.kubecost:9090 " + KindCostAnalyzer,
		}},
		{"finops", "kc", []string{
			"http://kc-frontend.finops:9090 " + KindFrontend3,
			"http://kc-cost-analyzer.finops:9090 " + KindCostAnalyzer,
		}},
		// 2.x uses a release name that holds the chart's name as it is; 1.x does not.
		{"kubecost", "my-cost-analyzer", []string{
			"http://my-cost-analyzer-frontend.kubecost:9090 " + KindFrontend3,
			"http://my-cost-analyzer.kubecost:9090 " + KindCostAnalyzer,
			"http://my-cost-analyzer-cost-analyzer.kubecost:9090 " + KindCostAnalyzer,
		}},
		// trunc 63 | trimSuffix "-".
		{"kubecost", long, []string{
			"http://" + long + ".kubecost:9090 " + KindFrontend3,
			"http://" + long + ".kubecost:9090 " + KindCostAnalyzer,
		}},
	} {
		if got := urls(Candidates(tc.ns, tc.release)); !slices.Equal(got, tc.want) {
			t.Errorf("Candidates(%q, %q) = %q, want %q", tc.ns, tc.release, got, tc.want)
		}
	}
}

func deadURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestDiscoverFindsGen3: nothing listens on the first place, a UI answers
// HTML on the second, and the third is a Kubecost 3.x frontend (with SSO:
// the probe carries the headers): it is chosen and logged.
func TestDiscoverFindsGen3(t *testing.T) {
	srv := kubecostsim.NewGen3Server(simConfig(), kubecostsim.Gen3Config{RequireHeader: "X-API-KEY: k"})
	t.Cleanup(srv.Close)
	ui := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>Grafana</html>"))
	})
	logs := &syncbuf.Buffer{}
	cands := []Candidate{{deadURL(t), KindFrontend3}, {ui.URL, KindCostAnalyzer}, {srv.URL, KindFrontend3}}
	got, err := Discover(context.Background(), cands, DiscoverOptions{
		Path: "/model/allocation", Headers: http.Header{"X-Api-Key": {"k"}}, ConnectTimeout: time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Now: simConfig().Now,
	})
	if err != nil || got != srv.URL {
		t.Fatalf("Discover = %q, %v; want %s", got, err, srv.URL)
	}
	if l := logs.String(); !strings.Contains(l, "found Kubecost") || !strings.Contains(l, srv.URL) || !strings.Contains(l, KindFrontend3) {
		t.Errorf("the choice is not logged:\n%s", l)
	}
	if n := len(srv.Sim.Requests()); n != 1 {
		t.Errorf("the aggregator saw %d probes, want 1", n)
	}
	// Without the headers the 3.x API answers 401: still the server, chosen.
	got, err = Discover(context.Background(), cands[2:], DiscoverOptions{Path: "/model/allocation"})
	if err != nil || got != srv.URL {
		t.Errorf("without credentials: %q, %v", got, err)
	}
}

// TestDiscoverNothing: one error naming every URL tried and its answer.
func TestDiscoverNothing(t *testing.T) {
	dead := deadURL(t)
	notFound := serve(t, http.NotFound)
	_, err := Discover(context.Background(), []Candidate{{dead, KindFrontend3}, {notFound.URL, KindCostAnalyzer}},
		DiscoverOptions{Path: "/model/allocation", ConnectTimeout: time.Second})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{dead + "/model/allocation (" + KindFrontend3 + "): ", "connection refused",
		notFound.URL + "/model/allocation (" + KindCostAnalyzer + "): HTTP 404", "KUBECOST_API_ENDPOINT", "KUBECOST_NAMESPACE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
