package kubecost

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Candidate is one place Kubecost may answer, for discovery.
type Candidate struct {
	URL  string // base URL, e.g. http://kubecost-frontend.kubecost:9090
	Kind string // what would answer there, for logs and errors
}

// Kinds of candidates.
const (
	KindFrontend3    = "Kubecost 3.x frontend"
	KindCostAnalyzer = "Kubecost 1.x/2.x cost-analyzer"
)

// Candidates returns where a Kubecost installed as Helm release release in namespace answers
// its API, newest chart first. It makes no network call, so the names are tested without a cluster.
//
//   - Kubecost 3.x (chart kubecost/kubecost v3.0.0 to v3.2.1): the frontend service
//     "<release>-frontend" (templates/frontend/_helpers.tpl, kubecost.frontend.fullname: no
//     "contains" shortcut), port 9090 (values.yaml frontend.service.port); no cost-analyzer.
//   - Kubecost 2.x (chart cost-analyzer, templates/_helpers.tpl, cost-analyzer.serviceName):
//     "<release>-cost-analyzer", or the release alone when it contains "cost-analyzer".
//   - Kubecost 1.x: always "<release>-cost-analyzer", port 9090 (values.yaml service.port).
//
// Names are cut to 63 characters without a trailing '-' (the charts' trunc 63 | trimSuffix "-").
// A fullnameOverride is not guessed: set KUBECOST_API_ENDPOINT then.
func Candidates(namespace, release string) []Candidate {
	namespace, release = cmp.Or(namespace, "kubecost"), cmp.Or(release, "kubecost")
	svc := func(name string) string {
		if len(name) > 63 {
			name = name[:63]
		}
		return "http://" + strings.TrimSuffix(name, "-") + "." + namespace + ":9090"
	}
	out := []Candidate{{URL: svc(release + "-frontend"), Kind: KindFrontend3}}
	v2 := release + "-cost-analyzer"
	if strings.Contains(release, "cost-analyzer") {
		v2 = release
	}
	out = append(out, Candidate{URL: svc(v2), Kind: KindCostAnalyzer})
	if v1 := svc(release + "-cost-analyzer"); v1 != out[1].URL {
		out = append(out, Candidate{URL: v1, Kind: KindCostAnalyzer})
	}
	return out
}

// DiscoverOptions configures Discover with the run's client settings (TLS, credentials, limits).
type DiscoverOptions struct {
	// Path is the allocation path asked of each candidate, e.g. "/model/allocation".
	Path           string
	ConnectTimeout time.Duration // default 10s
	ReadTimeout    time.Duration // response headers; default 60s
	TLS            *tls.Config
	Headers        http.Header
	BearerToken    string
	Logger         *slog.Logger
	Now            func() time.Time // default time.Now: dates the probe's window
}

// Discover asks each candidate in turn for yesterday's accumulated cluster totals and returns
// the base URL of the first that answers as the Allocation API: a JSON object, a 401/403 (the
// run then fails naming the credentials setting) or a 5xx (the run's retries deal with it). A
// 404, an HTML page (a UI or a login page) or no connection moves on to the next. When none
// answers, the error names every URL tried and what it returned.
func Discover(ctx context.Context, candidates []Candidate, o DiscoverOptions) (string, error) {
	log := cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	now := o.Now
	if now == nil {
		now = time.Now
	}
	setDefault(&o.ConnectTimeout, 10*time.Second)
	setDefault(&o.ReadTimeout, 60*time.Second)
	hc := &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: o.ConnectTimeout}).DialContext,
		TLSHandshakeTimeout:   o.ConnectTimeout,
		ResponseHeaderTimeout: o.ReadTimeout,
		TLSClientConfig:       o.TLS,
	}}
	defer hc.CloseIdleConnections()
	day := exporter.Midnight(now()).Add(-24 * time.Hour)
	q := url.Values{
		"window":     {day.Format(time.RFC3339) + "," + day.Add(24*time.Hour).Format(time.RFC3339)},
		"aggregate":  {"cluster"},
		"accumulate": {"true"},
	}
	var tried []string
	for _, c := range candidates {
		target := strings.TrimRight(c.URL, "/") + o.Path
		found, why := probe(ctx, hc, o, target+"?"+q.Encode())
		if ctx.Err() != nil {
			return "", fmt.Errorf("kubecost: discovery: %w", context.Cause(ctx))
		}
		if found {
			log.Info("found Kubecost", "endpoint", c.URL, "kind", c.Kind, "answer", why,
				"tried", len(tried)+1, "setting", "KUBECOST_API_ENDPOINT is not set")
			return c.URL, nil
		}
		log.Debug("no Kubecost here", "url", target, "kind", c.Kind, "answer", why)
		tried = append(tried, target+" ("+c.Kind+"): "+why)
	}
	return "", fmt.Errorf("kubecost: KUBECOST_API_ENDPOINT is not set and no Kubecost answered at any of the %d places tried: %s; "+
		"set KUBECOST_NAMESPACE and KUBECOST_RELEASE to where Kubecost is installed, or KUBECOST_API_ENDPOINT to its URL",
		len(tried), strings.Join(tried, "; "))
}

// probe sends one request and says whether the Allocation API answered, and with what, in
// words fit for a log line (secrets hidden).
func probe(ctx context.Context, hc *http.Client, o DiscoverOptions, target string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false, "invalid URL"
	}
	setHeaders(req, o.Headers, o.BearerToken)
	resp, err := hc.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // its URL repeats the query
		}
		return false, hideSecrets(exporter.Redact(err.Error()), secrets(o.Headers, o.BearerToken))
	}
	defer resp.Body.Close()
	br := bufio.NewReader(io.LimitReader(resp.Body, 64<<10))
	head, _ := br.Peek(256)
	body := strings.TrimSpace(string(head))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch code := resp.StatusCode; {
	case code == http.StatusOK && strings.HasPrefix(body, "{") && mt != "text/html":
		return true, "HTTP 200 with a JSON object"
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return true, "HTTP " + resp.Status + " (the API wants credentials: " + exporter.HeadersSetting + ")"
	case code >= 500:
		return true, "HTTP " + resp.Status + " (the API is there but failing)"
	case code == http.StatusOK:
		return false, "HTTP 200 with " + contentType(resp) + ", not a JSON object (a UI or login page)"
	}
	return false, "HTTP " + resp.Status
}
