// Package kubecost is the client of the Kubecost (or OpenCost) Allocation API. It streams each
// response one allocation at a time into an exporter.RecordSink, so a large cluster's hourly day
// never sits in memory, and it survives a struggling Kubecost: requests are retried with
// backoff, and hourly windows that keep failing are split into smaller ones.
//
// The response is read as encoding/json reads it: member names compare after their escapes are
// decoded; invalid UTF-8 or a lone surrogate escape becomes U+FFFD in every string, rather than
// failing the day (a stray byte in one label is not worth a lost day, and Parquet strings must
// be valid UTF-8); a number written as a string is read only when it is a JSON number, NaN or an
// infinity (which become 0 or null). One string or number longer than MAX_VALUE_BYTES
// (Options.MaxValueBytes) fails the day, naming the allocation, so it cannot take the pod's memory.
package kubecost

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

var _ exporter.AllocationSource = (*Client)(nil)

// ErrNoData is returned by FetchDay when every response for the day was
// well-formed but held no allocation at all.
var ErrNoData = errors.New("the server returned no allocations")

// ErrFilterIgnored is returned by ClusterSource.FetchDay when, after retries, the response holds
// rows of another cluster than the one asked for; it is also ErrOtherAnswer and
// exporter.ErrServerUnsupported.
var ErrFilterIgnored = errors.New("the server ignored the cluster filter")

// Options configures a Client.
type Options struct {
	URL       string // full Allocation API URL, e.g. http://kubecost-cost-analyzer.kubecost:9090/model/allocation
	Aggregate string // explicit aggregate parameter, e.g. "cluster,node,namespace,pod,container"
	// Flavor is the server's API (see Flavor); "" means FlavorKubecost.
	Flavor   Flavor
	Step     time.Duration // 24h (daily rows) or 1h (hourly rows)
	Paginate bool          // hourly step only: one request per hour instead of one per day
	// Retries is how often a window is asked again after a transient failure; an hourly window
	// that still fails is then split in halves, and a failing half again at once, down to one hour.
	Retries int

	ConnectTimeout time.Duration // TCP connect and TLS handshake; default 10s
	ReadTimeout    time.Duration // response headers, and the longest pause while reading a body; default 60s
	TLS            *tls.Config   // nil: Go's defaults
	BearerToken    string        // sent as "Authorization: Bearer ..."; never logged
	// Headers are sent on every request (KUBECOST_HTTP_HEADERS_FILE): an SSO-enabled Kubecost's
	// credentials. Their values are never logged and are hidden in every error.
	Headers http.Header

	Projection *schema.Projection // required: label slots and derived properties
	Logger     *slog.Logger       // nil: discard

	// BackoffBase and BackoffMax (defaults 1s, 30s) bound the jittered exponential backoff
	// between retries; RetryAfterMax (default 60s) caps a server's Retry-After.
	BackoffBase, BackoffMax, RetryAfterMax time.Duration
	// Observer, when set, is told every request's outcome, for the run's metrics.
	Observer Observer
	// ClusterFilter is how a ClusterSource's queries name their cluster; "" means FilterV2.
	ClusterFilter ClusterFilter
	// MaxValueBytes caps one string or number's JSON text; a larger one fails the day.
	// 0 means DefaultMaxValueBytes.
	MaxValueBytes int
}

// Outcome is what became of one request.
type Outcome string

// Request outcomes: a failed request is retried, split or failed; a whole body is ok.
const (
	OutcomeOK      Outcome = "ok"
	OutcomeRetried Outcome = "retried"
	OutcomeSplit   Outcome = "split"
	OutcomeFailed  Outcome = "failed"
)

// Outcomes lists every outcome, in a stable order.
func Outcomes() []Outcome {
	return []Outcome{OutcomeOK, OutcomeRetried, OutcomeSplit, OutcomeFailed}
}

// Observer receives request outcomes; days are fetched in parallel, so it must be concurrency-safe.
type Observer interface {
	ObserveRequest(Outcome)
}

const (
	// minSplit is the smallest split of a failing window: Kubecost's hourly sets cannot be cut finer.
	minSplit = time.Hour
	// maxRestarts bounds how often a day is refetched from its start after a response failed midway.
	maxRestarts = 10
)

// Stats counts what a Client did.
type Stats struct {
	Requests    int64 // HTTP requests sent
	Retries     int64 // requests repeated after a transient failure
	Splits      int64 // windows split in two
	Restarts    int64 // sink resets followed by a refetch of the day
	Bytes       int64 // response body bytes read (after decompression)
	Allocations int64 // allocations decoded, including those later discarded by a restart
}

func (s *Stats) add(o Stats) {
	s.Requests += o.Requests
	s.Retries += o.Retries
	s.Splits += o.Splits
	s.Restarts += o.Restarts
	s.Bytes += o.Bytes
	s.Allocations += o.Allocations
}

// Client queries one Allocation API. It is safe for concurrent use.
type Client struct {
	opts     Options
	srv      server // opts.Flavor's
	url      *url.URL
	http     *http.Client
	log      *slog.Logger
	decoders sync.Pool          // *decoder bound to opts.Projection
	bare     *schema.Projection // for AvailableDays, which needs no labels

	mu    sync.Mutex
	total Stats
	seq   atomic.Int64 // request ids for logs
	// checkIdle's warnings, once per Client (one Client per run).
	noIdleWarn, mergedIdleWarn sync.Once
	secrets                    []string // header values and token, hidden in errors
}

// New validates opts and returns a Client. It makes no network call.
func New(opts Options) (*Client, error) {
	u, err := exporter.ParseHTTPURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("kubecost: invalid URL %q: %w", redactURL(opts.URL), err)
	}
	switch {
	case opts.Aggregate == "":
		return nil, errors.New("kubecost: Aggregate is required")
	case opts.Step != time.Hour && opts.Step != 24*time.Hour:
		return nil, fmt.Errorf("kubecost: Step %v: want 1h or 24h", opts.Step)
	case opts.Projection == nil:
		return nil, errors.New("kubecost: Projection is required")
	case opts.Retries < 0:
		return nil, fmt.Errorf("kubecost: Retries %d: want >= 0", opts.Retries)
	case opts.MaxValueBytes < 0:
		return nil, fmt.Errorf("kubecost: MaxValueBytes %d: want >= 0", opts.MaxValueBytes)
	}
	opts.Flavor = cmp.Or(opts.Flavor, Flavors()[0])
	srv, ok := opts.Flavor.spec()
	if !ok {
		return nil, fmt.Errorf("kubecost: unknown Flavor %q (accepted: %s)", opts.Flavor, join(Flavors()))
	}
	if opts.BearerToken != "" && opts.Headers.Get("Authorization") != "" {
		return nil, fmt.Errorf("kubecost: a bearer token and an Authorization header in %s: give one of them", exporter.HeadersSetting)
	}
	opts.Headers = opts.Headers.Clone()
	opts.ClusterFilter = cmp.Or(opts.ClusterFilter, ClusterFilters()[0])
	if p := FilterProblem(opts.Flavor, opts.ClusterFilter); p != "" {
		return nil, fmt.Errorf("kubecost: ClusterFilter %q: %s", opts.ClusterFilter, p)
	}
	setDefault(&opts.ConnectTimeout, 10*time.Second)
	setDefault(&opts.ReadTimeout, 60*time.Second)
	setDefault(&opts.BackoffBase, time.Second)
	setDefault(&opts.BackoffMax, 30*time.Second)
	setDefault(&opts.RetryAfterMax, 60*time.Second)
	if opts.Step != time.Hour {
		opts.Paginate = false
	}
	c := &Client{opts: opts, srv: srv, url: u, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)), bare: schema.NewProjection("", "", nil, nil),
		secrets: secrets(opts.Headers, opts.BearerToken)}
	c.http = &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   opts.ConnectTimeout,
		ResponseHeaderTimeout: opts.ReadTimeout,
		TLSClientConfig:       opts.TLS,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		// A day is hundreds of MB in chunks of a few KiB; with net/http's 4 KiB default
		// buffer each chunk's header, and the start of its data, costs a system call.
		ReadBufferSize: 64 << 10,
	}}
	c.decoders.New = func() any { return newDecoder(opts.Projection) }
	if srv.limit != "" {
		// Once per run: the archive differs from a Kubecost one, and the user should know why.
		c.log.Info("API flavour limitation", "flavor", string(opts.Flavor), "limitation", srv.limit)
	}
	return c, nil
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

// Stats returns the totals over every call so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// window is a query window [start, end) and how often it has been retried. A half of a failed
// window is split again at its first failure: the full-size window already spent its retries,
// and a half is both a retry and a cheaper query.
type window struct {
	start, end time.Time
	attempts   int
	halved     bool
}

// String is the window as the query sends it, ready to paste into curl.
func (w window) String() string {
	return w.start.UTC().Format(time.RFC3339) + "," + w.end.UTC().Format(time.RFC3339)
}

// job is one logical fetch: a plan of windows, queried with the same parameters.
type job struct {
	plan      []window
	aggregate string
	step      time.Duration
	full      bool   // send the full CCA parameter set (FetchDay)
	avail     bool   // send the availability query's idle parameters
	split     bool   // windows may be split on failure (hourly FetchDay)
	cluster   string // "" or the one cluster the query asks for (federated)
	dec       *decoder
	// check is the sink run writes to: it fails a response that answers another query.
	check *answerCheck
}

// AvailableDays returns the UTC midnights in [from, to) for which Kubecost has a non-empty
// allocation set, in ascending order, each with the sum of its allocations' totalCost.
func (c *Client) AvailableDays(ctx context.Context, from, to time.Time) ([]exporter.DayTotal, error) {
	days, err := c.availability(ctx, from, to)
	if err != nil {
		return nil, err
	}
	all := map[int64]float64{}
	for _, byDay := range days.seen {
		for ms, total := range byDay {
			all[ms] += total
		}
	}
	return dayTotals(all), nil
}

// ClusterDays is AvailableDays per cluster of a federated Kubecost, from one query, keyed by
// cluster id (properties.cluster); a day's total includes the cluster's idle where the server
// splits idle by cluster (server.avail). Idle merged across clusters is reported for none.
func (c *Client) ClusterDays(ctx context.Context, from, to time.Time) (map[string][]exporter.DayTotal, error) {
	days, err := c.availability(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]exporter.DayTotal, len(days.seen))
	for id, byDay := range days.seen {
		if id != mergedIdle {
			out[id] = dayTotals(byDay)
		}
	}
	return out, nil
}

// mergedIdle is the daySet key of idle rows of no cluster: no cluster id can be it (ids are
// Prometheus label values, never holding a NUL byte).
const mergedIdle = "\x00idle"

func (c *Client) availability(ctx context.Context, from, to time.Time) (*daySet, error) {
	from, to = exporter.Midnight(from), exporter.Midnight(to)
	days := &daySet{from: from, to: to, seen: map[string]map[int64]float64{}}
	if !to.After(from) {
		return days, nil
	}
	j := &job{
		plan:      []window{{start: from, end: to}},
		aggregate: "cluster",
		step:      24 * time.Hour,
		avail:     true,
		dec:       newDecoder(c.bare),
	}
	// The plan trusts these days and totals: one row per cluster and day, not a stale finer answer.
	j.check = newAnswerCheck(days, c.srv.name, j.aggregate)
	j.check.perSet, j.check.seen = true, map[string]struct{}{}
	st, err := c.run(ctx, j)
	c.record(st)
	if err != nil && !errors.Is(err, ErrNoData) {
		return nil, err
	}
	return days, nil
}

func dayTotals(byDay map[int64]float64) []exporter.DayTotal {
	out := make([]exporter.DayTotal, 0, len(byDay))
	for ms, total := range byDay {
		out = append(out, exporter.DayTotal{Day: time.UnixMilli(ms).UTC(), TotalCost: exporter.RoundTotal(total)})
	}
	slices.SortFunc(out, func(a, b exporter.DayTotal) int { return a.Day.Compare(b.Day) })
	return out
}

var totalCost = schema.DoubleIndex("totalCost")

// daySet sums an aggregate=cluster answer's totalCost per cluster and day: the day's total
// tells a later run that Kubecost reconciled the day again.
type daySet struct {
	from, to time.Time
	seen     map[string]map[int64]float64 // cluster id → day (ms) → total
}

func (s *daySet) Write(r *schema.Record) error {
	day := exporter.Midnight(time.UnixMilli(r.Start))
	if day.Before(s.from) || !day.Before(s.to) {
		return nil
	}
	id := r.Props[schema.PropCluster]
	if id == "" && r.Name == schema.IdleName {
		id = mergedIdle
	}
	byDay := s.seen[id]
	if byDay == nil {
		byDay = map[int64]float64{}
		s.seen[id] = byDay
	}
	byDay[day.UnixMilli()] += r.Num[totalCost]
	return nil
}

func (s *daySet) Reset() error { clear(s.seen); return nil }

// FetchDay streams every allocation of the UTC day starting at day into sink.
func (c *Client) FetchDay(ctx context.Context, day time.Time, sink exporter.RecordSink) error {
	_, err := c.FetchDayStats(ctx, day, sink)
	return err
}

// FetchDayStats is FetchDay that also reports what fetching the day took.
func (c *Client) FetchDayStats(ctx context.Context, day time.Time, sink exporter.RecordSink) (Stats, error) {
	return c.fetchDay(ctx, day, "", &c.decoders, sink)
}

// fetchDay fetches day into sink with a decoder from pool, only cluster's rows if it is set.
func (c *Client) fetchDay(ctx context.Context, day time.Time, cluster string, pool *sync.Pool, sink exporter.RecordSink) (Stats, error) {
	day = exporter.Midnight(day)
	j := &job{aggregate: c.opts.Aggregate, step: c.opts.Step, full: true, split: c.opts.Step == time.Hour, cluster: cluster}
	if c.opts.Paginate {
		for h := range 24 {
			s := day.Add(time.Duration(h) * time.Hour)
			j.plan = append(j.plan, window{start: s, end: s.Add(time.Hour)})
		}
	} else {
		j.plan = []window{{start: day, end: day.Add(24 * time.Hour)}}
	}
	d := pool.Get().(*decoder)
	// The interner forgets every string: a pooled decoder holds at most one day's.
	defer func() { clear(d.p.strs); pool.Put(d) }()
	j.dec = d
	j.check = newAnswerCheck(sink, c.srv.name, j.aggregate)
	if cluster != "" {
		k, v := c.opts.ClusterFilter.param(cluster)
		j.check.cluster, j.check.param = cluster, k+"="+v
		j.check.hint = filterHint(c.srv, c.opts.ClusterFilter, cluster)
	}
	st, err := c.run(ctx, j)
	c.record(st)
	if errors.Is(err, ErrNoData) {
		return st, fmt.Errorf("kubecost: day %s: %w", day.Format(time.DateOnly), &saidError{c.srv.name, err})
	}
	if err == nil {
		c.checkIdle(day, cluster, j.check)
	}
	return st, err
}

func (c *Client) record(st Stats) {
	c.mu.Lock()
	c.total.add(st)
	c.mu.Unlock()
}

// run fetches j's plan in order into j.check. A window that keeps failing is retried, then
// split when j allows it. A response that fails after some of its rows reached the sink resets
// the sink and restarts the plan: only the whole day can be discarded.
func (c *Client) run(ctx context.Context, j *job) (Stats, error) {
	var st Stats
	var n int64 // allocations in the current pass
	for i := 0; i < len(j.plan); {
		w := &j.plan[i]
		cur := *w // j.plan may be rewritten below
		got, err := c.attempt(ctx, j, cur, &st)
		n += int64(got)
		if err == nil {
			c.observe(OutcomeOK)
			i++
			continue
		}
		if ctx.Err() != nil {
			c.observe(OutcomeFailed)
			return st, fmt.Errorf("kubecost: get %s: %w", cur, context.Cause(ctx))
		}
		ae, ok := errors.AsType[*attemptError](err)
		if !ok || !ae.retry {
			c.observe(OutcomeFailed)
			return st, fmt.Errorf("kubecost: get %s: %w", cur, err)
		}
		dirty := got > 0
		canSplit := j.split && ae.big && w.end.Sub(w.start) >= 2*minSplit
		switch {
		case canSplit && (dirty || w.halved || ae.gateway || w.attempts >= c.opts.Retries):
			// Big hourly windows make Kubecost time out or run out of memory; halves are cheaper retries.
			halves := c.halve(*w)
			c.log.Warn("kubecost window failed, splitting it", "window", w.String(),
				"into", []string{halves[0].String(), halves[1].String()}, "reason", ae.Error())
			st.Splits++
			c.observe(OutcomeSplit)
			j.plan = slices.Replace(j.plan, i, i+1, halves...)
			if ae.retryAfter > 0 {
				if err := sleep(ctx, min(ae.retryAfter, c.opts.RetryAfterMax)); err != nil {
					return st, fmt.Errorf("kubecost: get %s: %w", halves[0], err)
				}
			}
		case w.attempts < c.opts.Retries:
			w.attempts++
			st.Retries++
			c.observe(OutcomeRetried)
			delay := c.backoff(w.attempts, ae.retryAfter)
			c.log.Warn("kubecost request failed, retrying", "window", w.String(),
				"attempt", w.attempts, "max_retries", c.opts.Retries, "reason", ae.Error(), "delay", delay)
			if err := sleep(ctx, delay); err != nil {
				return st, fmt.Errorf("kubecost: get %s: %w", w, err)
			}
		default:
			c.observe(OutcomeFailed)
			return st, c.giveUp(j, cur, ae)
		}
		if dirty {
			if int(st.Restarts) >= maxRestarts {
				return st, fmt.Errorf("kubecost: get %s: gave up after %d restarts of the day: %w", cur, st.Restarts, err)
			}
			st.Restarts++
			c.log.Warn("kubecost response failed after rows were written, restarting the day",
				"window", cur.String(), "rows_discarded", n, "restart", st.Restarts)
			if err := j.check.Reset(); err != nil {
				return st, fmt.Errorf("kubecost: reset sink: %w", err)
			}
			i, n = 0, 0
		}
	}
	if n == 0 {
		return st, ErrNoData
	}
	return st, nil
}

func (c *Client) observe(o Outcome) {
	if c.opts.Observer != nil {
		c.opts.Observer.ObserveRequest(o)
	}
}

func (c *Client) giveUp(j *job, w window, err *attemptError) error {
	if err.big && !j.split && j.full && w.end.Sub(w.start) > time.Hour {
		return fmt.Errorf("kubecost: get %s: %w (after %d retries; a daily query cannot be split without changing the rows: "+
			"set GRANULARITY=hourly with KUBECOST_ALLOCATION_API_PAGINATE=true to query one hour at a time%s)", w, err, w.attempts, gatewayHint(err))
	}
	return fmt.Errorf("kubecost: get %s: %w (after %d retries)", w, err, w.attempts)
}

// halve splits w on an hour boundary; both halves are at least minSplit.
func (c *Client) halve(w window) []window {
	hours := int64(w.end.Sub(w.start) / time.Hour)
	mid := w.start.Add(time.Duration(hours/2) * time.Hour)
	return []window{{start: w.start, end: mid, halved: true}, {start: mid, end: w.end, halved: true}}
}

// DayQuery is FetchDay's query without its window, canonically encoded: it decides which rows
// a day file holds, and goes into the config fingerprint.
func (c *Client) DayQuery() string {
	q := c.params(&job{aggregate: c.opts.Aggregate, step: c.opts.Step, full: true})
	q.Del("window")
	return q.Encode()
}

func (c *Client) query(j *job, w window) string {
	q := c.params(j)
	q.Set("window", w.String())
	u := *c.url
	u.RawQuery = q.Encode()
	return u.String()
}

// params are j's query parameters but the window; they win over the user's URL's own.
func (c *Client) params(j *job) url.Values {
	q := c.url.Query()
	q.Set("aggregate", j.aggregate)
	q.Set("step", stepParam(j.step))
	q.Set("accumulate", "false")
	params := c.srv.day
	if j.avail {
		params = c.srv.avail
	}
	if j.full || j.avail {
		for _, p := range params {
			q.Set(p[0], p[1])
		}
	}
	if j.cluster != "" {
		k, v := c.opts.ClusterFilter.param(j.cluster)
		q.Set(k, v)
	}
	return q
}

func stepParam(d time.Duration) string {
	if d == time.Hour {
		return "1h"
	}
	return "1d"
}
