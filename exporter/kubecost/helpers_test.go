package kubecost

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/syncbuf"
)

// decoderOptions are what the scanner's checks match (scan.go): a
// duplicate name is not an error (the last one wins, as with
// encoding/json), and UTF-8 is not checked. Neither matters to the
// columns, and both checks cost time. The fuzz tests hold the scanner to
// jsontext with these options.
var decoderOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
}

// testDay is the day most tests export.
var testDay = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

const containerAggregate = "cluster,node,namespace,pod,container"

// memSink keeps copies of the records it is given.
type memSink struct {
	rows   []schema.Record
	resets int
}

func (s *memSink) Write(r *schema.Record) error {
	var c schema.Record
	c.CopyFrom(r)
	s.rows = append(s.rows, c)
	return nil
}

func (s *memSink) Reset() error {
	s.rows = nil
	s.resets++
	return nil
}

func (s *memSink) names() []string {
	out := make([]string, len(s.rows))
	for i, r := range s.rows {
		out[i] = r.Name + "@" + time.UnixMilli(r.Start).UTC().Format(time.RFC3339)
	}
	slices.Sort(out)
	return out
}

func (s *memSink) byNamespace() map[string]float64 {
	m := map[string]float64{}
	for _, r := range s.rows {
		m[r.Props[schema.PropNamespace]] += r.Num[totalCostIndex]
	}
	return m
}

func testProjection() *schema.Projection {
	return schema.NewProjection("arn:aws:eks:us-east-1:111122223333:cluster/one", "one",
		[]string{"app.kubernetes.io/name", "team"}, []string{"owner"})
}

// newClient returns a client for url with fast retries and a log buffer.
func newClient(t *testing.T, url string, mod func(*Options)) (*Client, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	o := Options{
		URL:         url,
		Aggregate:   containerAggregate,
		Step:        time.Hour,
		Retries:     3,
		ReadTimeout: 10 * time.Second,
		Projection:  testProjection(),
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		BackoffBase: time.Millisecond,
		BackoffMax:  5 * time.Millisecond,
	}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client log:\n%s", logs.String())
		}
	})
	return c, logs
}

// simConfig is a small simulated cluster whose testDay is available.
func simConfig() kubecostsim.Config {
	return kubecostsim.Config{
		Seed:       7,
		Namespaces: 3, PodsPerNamespace: 4,
		Now: func() time.Time { return testDay.Add(5 * 24 * time.Hour) },
	}
}

func newSim(t *testing.T, cfg kubecostsim.Config) *kubecostsim.Server {
	t.Helper()
	srv := kubecostsim.NewServer(cfg)
	t.Cleanup(srv.Close)
	return srv
}

// serve starts an httptest server for h.
func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// countingHandler counts requests before delegating to h.
type countingHandler struct {
	mu sync.Mutex
	n  int
	h  http.HandlerFunc
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	c.h(w, r)
}

func (c *countingHandler) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func tlsConfigWith(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}}
}

// rootsConfig is what the caller builds from KUBECOST_CA_CERTIFICATE_SECRET_NAME.
func rootsConfig(t *testing.T, caPEM []byte) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("bad CA PEM")
	}
	return &tls.Config{RootCAs: pool}
}
