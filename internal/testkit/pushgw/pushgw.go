// Package pushgw is an in-process stand-in for a Prometheus Pushgateway. It
// speaks the push protocol (PUT replaces a group, POST replaces the pushed
// metric names within it, DELETE drops it; the grouping key is in the path,
// with the "@base64" form for values containing '/'), decodes bodies in
// whatever exposition format the Content-Type names, and checks every
// group the way the Pushgateway exposes it: as text, parsed back with the
// Prometheus text parser.
package pushgw

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Push is one request the gateway accepted.
type Push struct {
	Method   string
	Grouping map[string]string // job and the other grouping labels
	Families map[string]*dto.MetricFamily
}

// Server is the fake Pushgateway.
type Server struct {
	URL string
	srv *httptest.Server

	mu     sync.Mutex
	status int // != 0: answer every push with this status
	pushes []Push
	groups map[string]map[string]*dto.MetricFamily
	errs   []string
}

// Start starts a gateway on 127.0.0.1 that is closed with the test.
func Start(t testing.TB) *Server {
	s := &Server{groups: map[string]map[string]*dto.MetricFamily{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(func() {
		s.srv.Close()
		for _, e := range s.Errors() {
			t.Errorf("pushgateway: %s", e)
		}
	})
	return s
}

// FailWith makes every later push answer status (0: accept again).
func (s *Server) FailWith(status int) {
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
}

// Pushes returns the accepted pushes so far.
func (s *Server) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Push(nil), s.pushes...)
}

// Group returns the metrics the gateway holds for a grouping key, re-read
// through the text exposition as Prometheus would scrape them.
func (s *Server) Group(grouping map[string]string) map[string]*dto.MetricFamily {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.groups[groupID(grouping)])
}

// Errors lists protocol violations seen; Start's cleanup reports them.
func (s *Server) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

func (s *Server) fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.errs = append(s.errs, msg)
	http.Error(w, msg, status)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	grouping, err := parsePath(r.URL.EscapedPath())
	if err != nil {
		s.fail(w, http.StatusBadRequest, "%s %s: %v", r.Method, r.URL.Path, err)
		return
	}
	if s.status != 0 {
		http.Error(w, "injected failure", s.status)
		return
	}
	id := groupID(grouping)
	if r.Method == http.MethodDelete {
		delete(s.groups, id)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		s.fail(w, http.StatusMethodNotAllowed, "method %s", r.Method)
		return
	}
	fams, err := decode(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "decode body: %v", err)
		return
	}
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := grouping[lp.GetName()]; ok && v != lp.GetValue() {
					s.fail(w, http.StatusBadRequest, "%s: label %s=%q contradicts the grouping key", name, lp.GetName(), lp.GetValue())
					return
				}
			}
		}
	}
	g := s.groups[id]
	if g == nil || r.Method == http.MethodPut {
		g = map[string]*dto.MetricFamily{}
	}
	maps.Copy(g, fams)
	exposed, err := viaText(g)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "text exposition: %v", err)
		return
	}
	s.groups[id] = exposed
	s.pushes = append(s.pushes, Push{Method: r.Method, Grouping: grouping, Families: fams})
	w.WriteHeader(http.StatusOK)
}

// parsePath reads /metrics/job/<job>{/<label>/<value>}, where a label name
// ending in "@base64" carries a URL-safe base64 value.
func parsePath(p string) (map[string]string, error) {
	rest, ok := strings.CutPrefix(p, "/metrics/job/")
	if !ok {
		return nil, fmt.Errorf("path does not start with /metrics/job/")
	}
	parts := strings.Split(rest, "/")
	parts = append([]string{"job"}, parts...)
	if len(parts)%2 != 0 {
		return nil, fmt.Errorf("odd number of grouping path segments")
	}
	out := map[string]string{}
	for i := 0; i < len(parts); i += 2 {
		name, val := parts[i], parts[i+1]
		if n, ok := strings.CutSuffix(name, "@base64"); ok {
			b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(val, "="))
			if err != nil {
				return nil, fmt.Errorf("label %s: %v", n, err)
			}
			name, val = n, string(b)
		}
		if !model.UTF8Validation.IsValidLabelName(name) {
			return nil, fmt.Errorf("invalid label name %q", name)
		}
		out[name] = val
	}
	if out["job"] == "" {
		return nil, fmt.Errorf("empty job")
	}
	return out, nil
}

func decode(r *http.Request) (map[string]*dto.MetricFamily, error) {
	if _, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil {
		return nil, fmt.Errorf("content type %q: %v", r.Header.Get("Content-Type"), err)
	}
	dec := expfmt.NewDecoder(r.Body, expfmt.ResponseFormat(r.Header))
	out := map[string]*dto.MetricFamily{}
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if _, dup := out[mf.GetName()]; dup {
			return nil, fmt.Errorf("metric family %s sent twice", mf.GetName())
		}
		out[mf.GetName()] = mf
	}
}

// viaText writes g in the text format and parses it back.
func viaText(g map[string]*dto.MetricFamily) (map[string]*dto.MetricFamily, error) {
	var buf bytes.Buffer
	for _, mf := range g {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			return nil, err
		}
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(&buf)
}

func groupID(g map[string]string) string {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q,", k, g[k])
	}
	return b.String()
}

// Value returns the value of the gauge, counter or untyped sample name
// whose labels include want.
func Value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}
