package kubecost

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// endpointHint is what to check when the URL answers with something else than the Allocation API.
const endpointHint = "check KUBECOST_API_ENDPOINT (and KUBECOST_API_FLAVOR/KUBECOST_API_PATH): it must point at the " +
	"Kubecost frontend, port 9090 (Kubecost 3.x: http://kubecost-frontend.kubecost:9090; 1.x/2.x: " +
	"http://kubecost-cost-analyzer.kubecost:9090), or be unset to find it; " +
	"an HTML page means the request reached a UI, an ingress or a login page instead of the API"

var errStalled = errors.New("stalled")

// errAborted cancels a request whose body the decoder gave up on.
var errAborted = errors.New("response abandoned after a decode error")

// attemptError is a failed request. retry says the same request may succeed later; retryAfter
// is the server's Retry-After, if any. big says the window's size may be the cause (server
// errors, timeouts, bodies cut short), so a smaller one may succeed (not so a refused connection
// or a 429).
type attemptError struct {
	err        error
	retry      bool
	big        bool
	retryAfter time.Duration
	// gateway says a proxy answered for the server (502, 504); see gatewayHint.
	gateway bool
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

func transient(format string, a ...any) *attemptError {
	return &attemptError{err: fmt.Errorf(format, a...), retry: true, big: true}
}

func permanent(format string, a ...any) *attemptError {
	return &attemptError{err: fmt.Errorf(format, a...)}
}

// attempt sends one request for w and decodes its body into j.check. It returns the number of
// allocations written, also on failure.
func (c *Client) attempt(ctx context.Context, j *job, w window, st *Stats) (int, error) {
	// After connecting, ReadTimeout bounds the wait for headers and every pause in the body: a
	// Kubecost that stops sending mid-body would otherwise hang the job.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(c.opts.ConnectTimeout+c.opts.ReadTimeout, func() { cancel(errStalled) })
	defer idle.Stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.query(j, w), nil)
	if err != nil {
		return 0, permanent("build request: %w", err)
	}
	setHeaders(req, c.opts.Headers, c.opts.BearerToken)
	id := c.seq.Add(1)
	t0 := time.Now()
	st.Requests++
	c.log.Debug("kubecost request", "id", id, "window", w.String(), "step", stepParam(j.step), "aggregate", j.aggregate)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, c.requestError(ctx, err)
	}
	idle.Reset(c.opts.ReadTimeout)
	body := &bodyReader{r: resp.Body, idle: idle, timeout: c.opts.ReadTimeout}
	defer func() {
		// Drain a little so the connection can be reused.
		_, _ = io.CopyN(io.Discard, body, 64<<10)
		_ = resp.Body.Close()
		st.Bytes += body.n
	}()
	if resp.StatusCode != http.StatusOK {
		return 0, c.statusError(resp, body)
	}
	d := j.dec
	d.br.Reset(body)
	if err := c.checkJSON(resp, d.br); err != nil {
		if context.Cause(ctx) == errStalled {
			return 0, transient("no response data for %v (KUBECOST_ALLOCATION_API_READ_TIMEOUT)", c.opts.ReadTimeout)
		}
		return 0, err
	}
	j.check.at(w, j.step)
	d.abort = func() { cancel(errAborted) }
	d.p.sc.max = c.opts.MaxValueBytes
	n, err := d.decode(d.br, w.start, j.step, j.check)
	d.abort = nil
	st.Allocations += int64(n)
	c.log.Debug("kubecost response", "id", id, "window", w.String(), "status", resp.StatusCode,
		"bytes", body.n, "allocations", n, "duration", time.Since(t0), "error", err)
	if err == nil {
		return n, nil
	}
	return n, c.decodeError(ctx, err, body.n)
}

// decodeError classifies an error of decoding a 200 body after bytes: retried, split or final.
func (c *Client) decodeError(ctx context.Context, err error, bytes int64) error {
	var se *sinkError
	var ae *apiError
	switch {
	case errors.As(err, &se):
		if errors.Is(se.err, ErrOtherAnswer) {
			// A stale answer (kubecost/kubecost#4508) is right a moment later: retried, not split.
			return &attemptError{err: se.err, retry: true}
		}
		return se.err
	case errors.As(err, &ae):
		return statusAttemptError(ae, ae.code, 0)
	case errors.Is(err, errValueTooLarge):
		// The same body would fail again: not retried.
		return permanent("response after %d bytes: %w", bytes, err)
	case context.Cause(ctx) == errStalled:
		return transient("response stalled after %d bytes: no data for %v (KUBECOST_ALLOCATION_API_READ_TIMEOUT)", bytes, c.opts.ReadTimeout)
	case ctx.Err() != nil && context.Cause(ctx) != errAborted:
		return context.Cause(ctx)
	}
	return transient("invalid or truncated response body after %d bytes: %w", bytes, err)
}

// requestError classifies an error of http.Client.Do.
func (c *Client) requestError(ctx context.Context, err error) error {
	if context.Cause(ctx) == errStalled {
		return transient("no response within %v (CONNECTION_TIMEOUT + KUBECOST_ALLOCATION_API_READ_TIMEOUT)", c.opts.ConnectTimeout+c.opts.ReadTimeout)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err // its URL repeats the whole query
	}
	target := redactURL(c.opts.URL)
	dnsErr, isDNS := errors.AsType[*net.DNSError](err)
	opErr, isOp := errors.AsType[*net.OpError](err)
	netErr, isNet := errors.AsType[net.Error](err)
	switch {
	case isA[x509.UnknownAuthorityError](err), isA[x509.HostnameError](err), isA[x509.CertificateInvalidError](err),
		isA[*tls.CertificateVerificationError](err):
		return permanent("%s: %w (set KUBECOST_CA_CERTIFICATE_SECRET_NAME to a CA bundle that signs Kubecost's certificate, or TLS_VERIFY=false)", target, err)
	case isA[tls.RecordHeaderError](err):
		return permanent("%s: %w (the server does not speak TLS: use http:// in KUBECOST_API_ENDPOINT)", target, err)
	case isDNS && dnsErr.IsNotFound:
		return permanent("%s: %w (%s)", target, err, endpointHint)
	case isOp && opErr.Op == "dial":
		// Nothing was asked yet: Kubecost is down or restarting.
		e := transient("%s: %w", target, err)
		e.big = false
		return e
	case isNet && netErr.Timeout():
		return transient("%s: timed out: %w (CONNECTION_TIMEOUT=%v, KUBECOST_ALLOCATION_API_READ_TIMEOUT=%v)",
			target, err, c.opts.ConnectTimeout, c.opts.ReadTimeout)
	}
	// A connection closed while Kubecost computes is what an OOM-killed Kubecost looks like.
	return transient("%s: %w", target, err)
}

func isA[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// statusError describes a non-200 response, with the API's own message when the body is JSON.
func (c *Client) statusError(resp *http.Response, body io.Reader) error {
	b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
	msg := ""
	var e struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil {
		msg = strings.TrimSpace(cmp.Or(e.Message, e.Error))
	}
	if msg == "" && len(b) > 0 {
		msg = fmt.Sprintf("%s body %q", contentType(resp), snippet(b))
	}
	err := fmt.Errorf("%s returned HTTP %s", redactURL(c.opts.URL), resp.Status)
	if msg != "" {
		err = fmt.Errorf("%w: %s", err, hideSecrets(sanitize(msg, 512), c.secrets))
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		err = fmt.Errorf("%w (%s)", err, c.authHint())
	case http.StatusNotFound:
		err = fmt.Errorf("%w (%s)", err, endpointHint)
	}
	return statusAttemptError(err, resp.StatusCode, retryAfter(resp.Header.Get("Retry-After"), time.Now()))
}

func statusAttemptError(err error, code int, after time.Duration) *attemptError {
	return &attemptError{
		err:        err,
		retry:      code >= 500 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests,
		big:        code >= 500 || code == http.StatusRequestTimeout,
		retryAfter: after,
		gateway:    code == http.StatusBadGateway || code == http.StatusGatewayTimeout,
	}
}

// checkJSON rejects bodies that are not a JSON object: a proxy's HTML login page, or the UI's
// index.html when the endpoint names the UI port.
func (c *Client) checkJSON(resp *http.Response, br *bufio.Reader) error {
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return transient("%s returned an empty body", redactURL(c.opts.URL))
		}
		if err != nil {
			return transient("read body: %w", err)
		}
		if b == ' ' || b == '\t' || b == '\r' || b == '\n' {
			continue
		}
		_ = br.UnreadByte()
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if b == '{' && mt != "text/html" {
			return nil
		}
		head, _ := br.Peek(256)
		return permanent("%s returned %s, not a JSON object, starting %q; %s",
			redactURL(c.opts.URL), contentType(resp), hideSecrets(snippet(head), c.secrets), endpointHint)
	}
}

func contentType(resp *http.Response) string {
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		return sanitize(ct, 100)
	}
	return "no Content-Type"
}

// snippet is the start of a body, fit for a log line.
func snippet(b []byte) string { return sanitize(string(b[:min(len(b), 120)]), 80) }

// sanitize makes s printable on one line: invalid UTF-8 dropped, control characters and runs
// of spaces made one space, cut to at most n runes.
func sanitize(s string, n int) string {
	var out strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "") {
		if n == 0 {
			out.WriteString("...")
			break
		}
		if r < ' ' || r == utf8.RuneError || r == 0x7f || r == ' ' {
			if !space && out.Len() > 0 {
				out.WriteByte(' ')
				n--
			}
			space = true
			continue
		}
		space = false
		out.WriteRune(r)
		n--
	}
	return strings.TrimSpace(out.String())
}

// retryAfter parses a Retry-After header: delay seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil {
		return time.Duration(max(s, 0)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// backoff is the delay before retry number attempt (from 1): the server's Retry-After, else
// an exponential delay with jitter, so days fetched in parallel do not retry in lockstep.
func (c *Client) backoff(attempt int, after time.Duration) time.Duration {
	if after > 0 {
		return min(after, c.opts.RetryAfterMax)
	}
	d := c.opts.BackoffMax
	if attempt < 31 {
		d = min(c.opts.BackoffBase<<(attempt-1), c.opts.BackoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// redactURL is s as errors show it: credentials hidden, without the query that only lengthens them.
func redactURL(s string) string {
	s, _, _ = strings.Cut(s, "?")
	return exporter.Redact(s)
}

// bodyReader counts body bytes and pushes back the stall timer whenever data arrives.
type bodyReader struct {
	r       io.Reader
	n       int64
	idle    *time.Timer
	timeout time.Duration
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.n += int64(n)
		b.idle.Reset(b.timeout)
	}
	return n, err
}

// A proxy in front of Kubecost has a time limit of its own. Kubecost 3.x's frontend (chart
// kubecost/kubecost v3.0.0 to v3.2.1, templates/frontend/frontend-configmap.yaml,
// `location /model/`) proxies the API to the aggregator with proxy_read_timeout set to
// frontend.timeoutSeconds, 300 s by default (values.yaml), and answers a slower aggregator with
// 504 (custom_504.html), one that drops the connection (OOM-killed) with 502: the window was too
// big to compute in time. So the run loop splits an hourly window a proxy cut at once, rather
// than wait out the proxy's limit once more per retry (KUBECOST_MAX_RETRIES × 300 s).

// gatewayHint is added to the error of a daily window a proxy kept cutting: a daily query
// cannot be split, so the user must make it cheaper or give the proxy more time.
func gatewayHint(err *attemptError) string {
	if !err.gateway {
		return ""
	}
	return "; a 502 or 504 is a proxy's answer: Kubecost 3.x's frontend cuts answers slower than its frontend.timeoutSeconds " +
		"(300 s by default) with a 504, so raise that Helm value of Kubecost's chart, or query the aggregator's " +
		"port 9004 directly (KUBECOST_API_ENDPOINT=http://<release>-aggregator.<namespace>:9004 with KUBECOST_API_FLAVOR=cost-model)"
}

// setHeaders puts on req the headers of every Kubecost request, discovery's probes included.
func setHeaders(req *http.Request, h http.Header, bearer string) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "kubecost-s3-exporter/"+exporter.Version)
	for k, vs := range h {
		req.Header[k] = vs
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
}

// secrets are the header values and the bearer token, which no error may show: a server
// echoing the key it refused ("invalid API key abc...") would put it into the run's log.
func secrets(h http.Header, bearer string) []string {
	out := append(slices.Concat(slices.Collect(maps.Values(h))...), bearer)
	return slices.DeleteFunc(out, func(v string) bool { return v == "" })
}

func hideSecrets(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, exporter.Redacted)
	}
	return s
}

// authHint is what a 401 or 403 tells the user to check: the settings
// that carry credentials, the one in use first.
func (c *Client) authHint() string {
	switch {
	case len(c.opts.Headers) > 0:
		return "Kubecost refused the credentials: check the headers in " + exporter.HeadersSetting +
			" (e.g. the X-API-KEY of a Kubecost service account, or an Authorization header)"
	case c.opts.BearerToken != "":
		return "Kubecost refused the bearer token: check KUBECOST_BEARER_TOKEN_FILE or KUBECOST_BEARER_TOKEN_SECRET_NAME, " +
			"or give other credentials in " + exporter.HeadersSetting
	}
	return "Kubecost requires authentication (SSO with SAML or OIDC): give its credentials as request headers in " + exporter.HeadersSetting +
		" (e.g. X-API-KEY: <key>), or a bearer token in KUBECOST_BEARER_TOKEN_FILE or KUBECOST_BEARER_TOKEN_SECRET_NAME, " +
		"or point KUBECOST_API_ENDPOINT at the aggregator's in-cluster port 9008 (Kubecost 3.x tcp-api-rbac)"
}
