package kubecostsim

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Kubecost 3.x mode. A 3.x installation (chart kubecost/kubecost, tags
// v3.0.0 to v3.2.1) has no cost-analyzer service and no cost-model
// container: the cost agent is the finops-agent subchart (Chart.yaml,
// dependency finops-agent aliased finopsagent), the API is the
// aggregator's, and users reach it through the frontend:
//
//   - templates/frontend/frontend-service.yaml and frontend/_helpers.tpl:
//     service "<release>-frontend", port 9090 (values.yaml
//     frontend.service.port).
//   - templates/frontend/frontend-configmap.yaml: nginx's `location /model/`
//     does `proxy_pass http://aggregator/;`, which replaces the matched
//     "/model/" with "/": /model/allocation reaches the aggregator's
//     /allocation, on "<release>-aggregator:9004" (upstream aggregator;
//     templates/aggregator/aggregator-service.yaml, port tcp-api 9004).
//     proxy_read_timeout is frontend.timeoutSeconds, 300 s by default
//     (values.yaml), and `error_page 504 /custom_504.html` answers a
//     slower aggregator with the frontend's HTML 504 page. Everything but
//     /model/, /healthz and a few SSO paths is the UI
//     (`try_files $uri $uri/ /index.html`).
//   - With SAML or OIDC on, the aggregator's API wants credentials;
//     aggregator-service.yaml then adds port tcp-api-rbac 9008 for
//     in-cluster callers without them.
//
// Gen3Server is that pair: a frontend proxying to an aggregator, each on
// its own 127.0.0.1 port, so tests can use either as a user would.

// Gen3Config is how the simulated 3.x installation answers.
type Gen3Config struct {
	// Timeout is the frontend's proxy_read_timeout
	// (frontend.timeoutSeconds); default 300 s.
	Timeout time.Duration
	// RequireHeader, "Name: value", is the credential the aggregator's
	// API wants (SSO on): a request without it is answered 401, one with
	// another value 403, as the aggregator's auth middleware does.
	RequireHeader string
	// ComputePerHour is how long the aggregator takes per hour of the
	// asked window before it answers a pod- or container-level query:
	// what makes a day's query outlast the frontend's timeout while its
	// hours do not. Cluster totals (the availability query) answer at
	// once, as a real aggregator's do next to a big cluster's rows.
	ComputePerHour time.Duration
}

// Gen3Server is a simulated Kubecost 3.x: Frontend (the URL users set)
// proxying /model/ to Aggregator. Close it when done.
type Gen3Server struct {
	Frontend   *httptest.Server
	Aggregator *httptest.Server
	Sim        *Sim
	URL        string // Frontend.URL
	proxy      *gen3Proxy
}

// NewGen3Server starts the aggregator and the frontend on 127.0.0.1.
// cfg.Flavor must be FlavorKubecost (the default).
func NewGen3Server(cfg Config, g Gen3Config) *Gen3Server {
	sim := New(cfg)
	s := &Gen3Server{Sim: sim}
	s.Aggregator = httptest.NewServer(NewGen3Aggregator(sim, g))
	up, _ := url.Parse(s.Aggregator.URL)
	s.proxy = newGen3Proxy(up, g)
	s.Frontend = httptest.NewServer(s.proxy)
	s.URL = s.Frontend.URL
	return s
}

// Close stops both servers.
func (s *Gen3Server) Close() {
	s.Frontend.Close()
	s.proxy.transport.CloseIdleConnections()
	s.Aggregator.Close()
}

// Cut returns how many answers the frontend cut with a 504.
func (s *Gen3Server) Cut() int { return s.proxy.Cut() }

// NewGen3Aggregator is the 3.x aggregator's API port (9004) over sim.
func NewGen3Aggregator(sim *Sim, g Gen3Config) http.Handler { return &aggregator{sim: sim, g: g} }

// NewGen3Frontend is the 3.x frontend proxying /model/ to the aggregator
// at aggregatorURL; Gen3Config.Timeout is its proxy_read_timeout.
func NewGen3Frontend(aggregatorURL *url.URL, g Gen3Config) http.Handler {
	return newGen3Proxy(aggregatorURL, g)
}

// gen3Proxy is the frontend's nginx: its server block and upstream.
type gen3Proxy struct {
	frontend
	transport *http.Transport

	mu  sync.Mutex
	cut int // answers cut with 504
}

func newGen3Proxy(up *url.URL, g Gen3Config) *gen3Proxy {
	if g.Timeout <= 0 {
		g.Timeout = 300 * time.Second
	}
	p := &gen3Proxy{transport: &http.Transport{ResponseHeaderTimeout: g.Timeout}}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			// proxy_pass with a URI ("/") replaces the location's prefix.
			r.SetURL(up)
			r.Out.URL.Path = "/" + strings.TrimPrefix(r.In.URL.Path, "/model/")
			r.Out.URL.RawPath = ""
			r.SetXForwarded()
		},
		Transport:    &idleCutter{rt: p.transport, idle: g.Timeout},
		ErrorHandler: p.gatewayError,
	}
	return p
}

// Cut returns how many answers the frontend cut with a 504.
func (p *gen3Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

// gatewayError answers as nginx does when the upstream fails: 504 with
// the frontend's custom_504.html after proxy_read_timeout, 502 when the
// aggregator refused or dropped the connection.
func (p *gen3Proxy) gatewayError(w http.ResponseWriter, _ *http.Request, err error) {
	var ne net.Error
	w.Header().Set("Content-Type", "text/html")
	if errors.As(err, &ne) && ne.Timeout() {
		p.mu.Lock()
		p.cut++
		p.mu.Unlock()
		w.WriteHeader(http.StatusGatewayTimeout)
		io.WriteString(w, "<!DOCTYPE html>\n<html><head><title>Request timed out</title></head>"+
			"<body><h1>The request took too long</h1><p>Kubecost did not answer in time.</p></body></html>\n")
		return
	}
	w.WriteHeader(http.StatusBadGateway)
	io.WriteString(w, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"+
		"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
}

// frontend is the 3.x frontend's nginx server block.
type frontend struct{ proxy *httputil.ReverseProxy }

func (f *frontend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/healthz":
		// location /healthz: nginx answers itself, aggregator or not.
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "healthy\n")
	case strings.HasPrefix(r.URL.Path, "/model/"):
		f.proxy.ServeHTTP(w, r)
	default:
		// try_files $uri $uri/ /index.html: any other path is the UI.
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><html><head><title>Kubecost</title></head><body><div id=\"app\"></div></body></html>\n")
	}
}

// aggregator is the 3.x aggregator's API port (9004): /allocation with
// the cost-model's parameters (the same handler the frontend's
// /model/allocation reaches), behind the SSO check when one is set.
type aggregator struct {
	sim *Sim
	g   Gen3Config
}

func (a *aggregator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/allocation" && r.URL.Path != "/healthz" {
		// The aggregator serves no /model/ prefix: that is the frontend's.
		writeError(w, http.StatusNotFound, ErrorKubecost, "404 page not found: "+r.URL.Path)
		return
	}
	if name, want, ok := strings.Cut(a.g.RequireHeader, ":"); ok && r.URL.Path == "/allocation" {
		switch got := r.Header.Get(strings.TrimSpace(name)); {
		case got == "":
			writeError(w, http.StatusUnauthorized, ErrorKubecost, "unauthorized: no credentials")
			return
		case got != strings.TrimSpace(want):
			// The refused key is not echoed back: the exporter's own
			// redaction is tested with a server that does (see tests).
			writeError(w, http.StatusForbidden, ErrorKubecost, "forbidden: invalid API key")
			return
		}
	}
	if agg := r.URL.Query().Get("aggregate"); a.g.ComputePerHour > 0 && (strings.Contains(agg, "pod") || strings.Contains(agg, "container")) {
		if h := windowHours(r.URL.Query().Get("window")); h > 0 {
			t := time.NewTimer(time.Duration(h) * a.g.ComputePerHour)
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
	a.sim.ServeHTTP(w, r)
}

// windowHours is the length in hours of an RFC 3339 "start,end" window,
// 0 when it is not one.
func windowHours(s string) int {
	from, to, ok := strings.Cut(s, ",")
	if !ok {
		return 0
	}
	a, err1 := time.Parse(time.RFC3339, from)
	b, err2 := time.Parse(time.RFC3339, to)
	if err1 != nil || err2 != nil || !b.After(a) {
		return 0
	}
	return int(b.Sub(a) / time.Hour)
}

// idleCutter makes proxy_read_timeout apply inside a body too: nginx's
// timeout is between two reads from the upstream, so an aggregator that
// pauses longer mid-body has the client's connection cut.
type idleCutter struct {
	rt   http.RoundTripper
	idle time.Duration
}

func (c *idleCutter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b := &idleBody{rc: resp.Body}
	b.t = time.AfterFunc(c.idle, func() { b.rc.Close() })
	b.idle = c.idle
	resp.Body = b
	return resp, nil
}

type idleBody struct {
	rc   io.ReadCloser
	t    *time.Timer
	idle time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.t.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.t.Stop()
	return b.rc.Close()
}
