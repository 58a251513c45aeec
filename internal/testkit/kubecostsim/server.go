package kubecostsim

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Sim is a simulated Kubecost or OpenCost. It is an http.Handler serving
// the Allocation API on the paths of Config.Flavor: /model/allocation
// (Kubecost frontend) and /allocation (cost-model) for Kubecost,
// /allocation/compute and /allocation for OpenCost, plus /healthz. Safe
// for concurrent use.
type Sim struct {
	cfg Config
	c   *cluster

	mu     sync.Mutex
	faults Faults
	reqs   []Request
	files  map[string]string // canonical query → pre-rendered body
	// factors holds the days whose costs were changed with
	// SetDayCostFactor, by day number since the epoch; idleFactors those
	// whose idle cost alone was changed with SetDayIdleFactor.
	factors, idleFactors map[int64]float64
	stale                staleAnswers // kubecost/kubecost#4508 (stale.go)
}

// Request is one request the Sim received, for assertions.
type Request struct {
	Time   time.Time
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	// Clusters are the ids of the clusters whose allocations a Fleet built
	// the response from (empty for a Sim); the idle rows of clusters the
	// filter rejected (FleetConfig.RealCore) do not count.
	Clusters []string
}

// New builds the simulated cluster. It is deterministic in cfg.Seed and the size fields.
func New(cfg Config) *Sim {
	cfg = cfg.withDefaults()
	return &Sim{cfg: cfg, c: newCluster(cfg), faults: cfg.Faults, files: map[string]string{}}
}

// Config returns the configuration with defaults filled in.
func (s *Sim) Config() Config { return s.cfg }

// LabelKeys returns the original (unsanitized) pod label keys the generator
// uses; some pods lack some of them.
func (s *Sim) LabelKeys() []string { return append([]string(nil), s.c.podLabelKeys...) }

// AnnotationKeys returns the original pod annotation keys the generator uses.
func (s *Sim) AnnotationKeys() []string { return append([]string(nil), s.c.podAnnotKeys...) }

// SetFaults replaces the faults injected into the following requests.
func (s *Sim) SetFaults(f Faults) {
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

// Faults returns the current faults; Times counts down as requests consume it.
func (s *Sim) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// SetDayCostFactor multiplies every cost of the UTC day holding day by
// factor, in every query and in the truth, from the next request on: what
// a late reconciliation of the cloud bill looks like (Kubecost revises a
// day's costs after it first reported them). Factor 1 undoes it.
func (s *Sim) SetDayCostFactor(day time.Time, factor float64) {
	n := floorDiv(day.Unix(), 86400)
	s.mu.Lock()
	defer s.mu.Unlock()
	if factor == 1 {
		delete(s.factors, n)
		return
	}
	if s.factors == nil {
		s.factors = map[int64]float64{}
	}
	s.factors[n] = factor
}

// serveDayCostFactor is SetDayCostFactor over HTTP, for the simulator as a
// command: POST /sim/day-cost-factor?day=2026-11-18&factor=1.01. It is the
// simulator's own control path; real Kubecost has nothing like it.
func (s *Sim) serveDayCostFactor(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, ErrorKubecost, "POST day=YYYY-MM-DD&factor=<number>")
		return
	}
	day, err := time.Parse(time.DateOnly, r.URL.Query().Get("day"))
	if err != nil {
		writeError(w, http.StatusBadRequest, ErrorKubecost, "day: want YYYY-MM-DD")
		return
	}
	f, err := strconv.ParseFloat(r.URL.Query().Get("factor"), 64)
	if err != nil || !(f > 0 && f < 1e6) {
		writeError(w, http.StatusBadRequest, ErrorKubecost, "factor: want a number > 0")
		return
	}
	s.SetDayCostFactor(day, f)
	fmt.Fprintf(w, "day %s costs x%g\n", day.Format(time.DateOnly), f)
}

// SetDayIdleFactor multiplies the idle cost of the UTC day holding day by
// factor, in every query and in the truth, from the next request on: a
// reconciliation that changed node prices but not the allocations' costs
// (it reaches the idle rows only). Factor 1 undoes it.
func (s *Sim) SetDayIdleFactor(day time.Time, factor float64) {
	n := floorDiv(day.Unix(), 86400)
	s.mu.Lock()
	defer s.mu.Unlock()
	if factor == 1 {
		delete(s.idleFactors, n)
		return
	}
	if s.idleFactors == nil {
		s.idleFactors = map[int64]float64{}
	}
	s.idleFactors[n] = factor
}

func (s *Sim) dayFactors() map[int64]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.factors)
}

// newEngine is an engine over s's cluster with a copy of its day factors,
// taken now so that one response is consistent.
func (s *Sim) newEngine(q *query, out sink) *engine {
	e := newEngine(s.c, q, out, s.dayFactors())
	s.mu.Lock()
	e.idleFactors = maps.Clone(s.idleFactors)
	s.mu.Unlock()
	return e
}

// FailNext makes the next k allocation requests fail with HTTP status,
// keeping Delay and MaxWindowHours.
func (s *Sim) FailNext(k, status int) {
	s.mu.Lock()
	s.faults.Mode, s.faults.Times, s.faults.Status = FaultStatus, k, status
	s.mu.Unlock()
}

// Requests returns a copy of the allocation requests received so far.
func (s *Sim) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// ResetRequests forgets the recorded requests.
func (s *Sim) ResetRequests() {
	s.mu.Lock()
	s.reqs = nil
	s.mu.Unlock()
}

// AddPrerendered serves the contents of file, instead of generating, for
// requests whose query equals q (parameter order does not matter). Faults
// still apply. Meant for benchmarks that must not measure the simulator.
func (s *Sim) AddPrerendered(q url.Values, file string) {
	s.mu.Lock()
	s.files[q.Encode()] = file
	s.mu.Unlock()
}

// WriteResponse writes the JSON body Kubecost would return for query q.
// It returns a *ParamError for bad parameters, before writing anything.
func (s *Sim) WriteResponse(w io.Writer, q url.Values) error {
	return s.WriteResponseContext(context.Background(), w, q)
}

// WriteResponseContext is WriteResponse that stops when ctx ends.
func (s *Sim) WriteResponseContext(ctx context.Context, w io.Writer, q url.Values) error {
	pq, err := parseQuery(q, s.cfg.Flavor)
	if err != nil {
		return err
	}
	return s.render(ctx, w, pq)
}

func (s *Sim) render(ctx context.Context, w io.Writer, q *query) error {
	loc := time.UTC
	if s.cfg.Quirks.OffsetTimes {
		loc = s.cfg.Quirks.Location
	}
	j := &jsonSink{c: s.c, q: q, w: w, buf: make([]byte, 0, flushAt+32<<10), quirks: s.cfg.Quirks,
		empty: s.cfg.EmptySets, loc: loc}
	j.begin()
	if err := s.newEngine(q, j).run(ctx, s.windows(q)); err != nil {
		return err
	}
	return j.finish()
}

func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		w.Write([]byte("ok\n"))
		return
	}
	if r.URL.Path == "/sim/day-cost-factor" {
		s.serveDayCostFactor(w, r)
		return
	}
	if !slices.Contains(s.cfg.Flavor.Paths(), r.URL.Path) {
		writeError(w, http.StatusNotFound, ErrorKubecost, "404 page not found: "+r.URL.Path)
		return
	}
	v := r.URL.Query()
	f := s.take(r, v)
	if writeFault(w, r, f) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, ErrorKubecost, "method not allowed")
		return
	}
	v = s.answerFor(v)
	q, err := parseQuery(v, s.cfg.Flavor)
	if err != nil {
		writeError(w, http.StatusBadRequest, ErrorKubecost, err.Error())
		return
	}
	if f.MaxWindowHours > 0 && q.end-q.start > int64(f.MaxWindowHours) {
		writeError(w, http.StatusInternalServerError, ErrorKubecost,
			fmt.Sprintf("error computing allocation: window of %dh exceeds memory (simulated OOM above %dh)", q.end-q.start, f.MaxWindowHours))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodHead {
		return
	}
	var out io.Writer = w
	if f.Mode == FaultTruncate {
		out = &truncWriter{w: w, left: f.TruncateAfter}
	}
	s.mu.Lock()
	file := s.files[v.Encode()]
	s.mu.Unlock()
	if file != "" {
		err = copyFile(out, file)
	} else {
		err = s.render(r.Context(), out, q)
	}
	if err != nil {
		// Status and part of the body are gone: drop the connection so the
		// client sees a broken body rather than a short valid-looking one.
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
}

// writeFault delays and answers the request as fault f says, and reports
// whether it answered.
func writeFault(w http.ResponseWriter, r *http.Request, f Faults) bool {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return true
		case <-t.C:
		}
	}
	switch f.Mode {
	case FaultStatus:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		if status == http.StatusServiceUnavailable && f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
		}
		writeError(w, status, f.ErrorStyle, "simulated failure: "+http.StatusText(status))
	case FaultHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Sign in</title></head><body>`+
			`<form method="post" action="/oauth2/start"><input name="user"><input type="password" name="pass">`+
			`<button>Sign in</button></form></body></html>`+"\n")
	case FaultInvalidJSON:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"code":200,"status":"success","data":[{"cluster-one":{"name":"cluster-one","totalCost":1.5,,}]`+"\n")
	case FaultNullData:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"code":200,"data":[null]}`+"\n")
	default:
		return false
	}
	return true
}

// take records the request and consumes one use of the current faults.
func (s *Sim) take(r *http.Request, v url.Values) Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: v, Header: r.Header.Clone()})
	f := s.faults
	if s.faults.Times > 0 {
		if s.faults.Times--; s.faults.Times == 0 {
			s.faults.Mode = FaultNone
		}
	}
	return f
}

func writeError(w http.ResponseWriter, status int, style ErrorStyle, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b := []byte(`{"code":`)
	if style == ErrorPlain {
		b = appendString(append(b[:0], `{"error":`...), msg)
	} else {
		b = strconv.AppendInt(b, int64(status), 10)
		b = appendString(append(b, `,"message":`...), msg)
	}
	w.Write(append(b, "}\n"...))
}

func copyFile(w io.Writer, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// errTruncated is returned once a truncating fault has used up its bytes.
type errTruncated struct{}

func (errTruncated) Error() string { return "kubecostsim: body truncated on purpose" }

// truncWriter lets the first left bytes through, then fails.
type truncWriter struct {
	w    io.Writer
	left int
}

func (t *truncWriter) Write(p []byte) (int, error) {
	if len(p) <= t.left {
		t.left -= len(p)
		return t.w.Write(p)
	}
	n, _ := t.w.Write(p[:t.left])
	t.left = 0
	return n, errTruncated{}
}

// Server is a Sim behind an httptest.Server. Close it when done.
type Server struct {
	*httptest.Server
	Sim *Sim
}

// NewServer starts a plain HTTP server on 127.0.0.1.
func NewServer(cfg Config) *Server {
	sim := New(cfg)
	return &Server{Server: httptest.NewServer(sim), Sim: sim}
}

// NewTLSServer starts an HTTPS server. With a nil tlsCfg it uses httptest's
// certificate (trusted by srv.Client(), PEM via srv.Certificate()); otherwise
// tlsCfg.Certificates are served, e.g. from GenerateCert.
func NewTLSServer(cfg Config, tlsCfg *tls.Config) *Server {
	srv := NewUnstartedServer(cfg)
	srv.TLS = tlsCfg
	srv.StartTLS()
	return srv
}

// NewUnstartedServer returns a server to configure (TLS, Config) and then
// Start or StartTLS.
func NewUnstartedServer(cfg Config) *Server {
	sim := New(cfg)
	return &Server{Server: httptest.NewUnstartedServer(sim), Sim: sim}
}
