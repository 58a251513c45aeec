// Package faultproxy is a fault-injecting HTTP reverse proxy for tests. Put
// in front of MinIO (or the Kubecost simulator), it forwards requests
// unchanged, including the Host header that SigV4 signatures cover, except
// those matched by a Rule, which it answers with an error status, cuts
// mid-body, or stalls. It records every request with the operation, the
// key and the status the client saw, so tests can count what reached the
// server. Standard library only.
package faultproxy

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// S3 operations, as Classify names them. Requests to anything that is not
// S3 are Other.
const (
	PutObject               = "PutObject"
	CopyObject              = "CopyObject"
	CreateMultipartUpload   = "CreateMultipartUpload"
	UploadPart              = "UploadPart"
	CompleteMultipartUpload = "CompleteMultipartUpload"
	AbortMultipartUpload    = "AbortMultipartUpload"
	ListObjectsV2           = "ListObjectsV2"
	ListMultipartUploads    = "ListMultipartUploads"
	GetObject               = "GetObject"
	HeadObject              = "HeadObject"
	DeleteObject            = "DeleteObject"
	Other                   = "Other"
)

// Action is what a matching Rule does.
type Action int

const (
	// Status answers Rule.Status with an S3 XML error of Rule.Code, after
	// reading the request body.
	Status Action = iota + 1
	// Cut reads Rule.After bytes of the request body, then closes the
	// connection without answering: a connection lost mid-upload.
	Cut
	// Stall reads the whole request body, then never answers, until the
	// client gives up or the proxy closes: a server that accepted a
	// request and hangs.
	Stall
	// StallBeforeBody never reads the body and never answers: a server
	// that stops reading mid-upload.
	StallBeforeBody
	// Hook runs Rule.Fn, then forwards the request.
	Hook
)

// Rule matches requests by operation and key substring and applies Action
// to the first Times of them (every one when Times is 0).
type Rule struct {
	Op     string // "" matches every operation
	Key    string // substring of the key; "" matches every key
	Action Action
	Status int
	Code   string
	After  int64
	Times  int
	Fn     func(*http.Request)

	used int
}

// Entry is one request the proxy saw.
type Entry struct {
	Op, Key string
	// Status is what the client got; 0 when the proxy cut or stalled.
	Status int
	// Injected is set when a Rule handled the request.
	Injected bool
}

// Proxy is a running proxy. Close it when done.
type Proxy struct {
	URL string

	target *url.URL
	rp     *httputil.ReverseProxy
	srv    *http.Server
	ln     net.Listener
	closed chan struct{}

	mu      sync.Mutex
	rules   []*Rule
	log     []Entry
	started map[string]int
}

// New starts a proxy on 127.0.0.1 in front of target (a base URL).
func New(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), target: u, ln: ln, closed: make(chan struct{}), started: map[string]int{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host // the signature covers Host
		},
		// Errors towards the client are the point of the tests; keep the
		// proxy's own log quiet.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p.srv = &http.Server{Handler: p}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy and releases every stalled request.
func (p *Proxy) Close() error {
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	return p.srv.Close()
}

// SetRules replaces the rules; the first matching rule applies.
func (p *Proxy) SetRules(rules ...Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = p.rules[:0]
	for i := range rules {
		r := rules[i]
		p.rules = append(p.rules, &r)
	}
}

// Log returns every request seen so far.
func (p *Proxy) Log() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Entry(nil), p.log...)
}

// ResetLog forgets the requests seen so far.
func (p *Proxy) ResetLog() {
	p.mu.Lock()
	p.log = nil
	p.started = map[string]int{}
	p.mu.Unlock()
}

// Started returns how many requests of op have arrived, including ones
// still in flight (stalled ones, say); Log only holds finished ones.
func (p *Proxy) Started(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started[op]
}

// Count returns how many requests of op on keys containing key got status.
func (p *Proxy) Count(op, key string, status int) int {
	n := 0
	for _, e := range p.Log() {
		if e.Op == op && strings.Contains(e.Key, key) && e.Status == status {
			n++
		}
	}
	return n
}

func (p *Proxy) match(op, key string) *Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started[op]++
	for _, r := range p.rules {
		if (r.Op == "" || r.Op == op) && strings.Contains(key, r.Key) && (r.Times == 0 || r.used < r.Times) {
			r.used++
			c := *r
			return &c
		}
	}
	return nil
}

func (p *Proxy) record(e Entry) {
	p.mu.Lock()
	p.log = append(p.log, e)
	p.mu.Unlock()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, key := Classify(r)
	rule := p.match(op, key)
	if rule == nil || rule.Action == Hook {
		if rule != nil && rule.Fn != nil {
			rule.Fn(r)
		}
		sw := &statusWriter{ResponseWriter: w}
		p.rp.ServeHTTP(sw, r)
		p.record(Entry{Op: op, Key: key, Status: sw.status, Injected: rule != nil})
		return
	}
	entry := Entry{Op: op, Key: key, Injected: true}
	defer func() { p.record(entry) }()
	switch rule.Action {
	case Status:
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(rule.Status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected by faultproxy</Message><Resource>%s</Resource></Error>`, rule.Code, r.URL.Path)
		entry.Status = rule.Status
	case Cut:
		_, _ = io.CopyN(io.Discard, r.Body, rule.After)
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case Stall, StallBeforeBody:
		if rule.Action == Stall {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		select {
		case <-r.Context().Done():
		case <-p.closed:
		}
	}
}

// Classify names the S3 operation of a path-style request and its key
// ("" for bucket-level operations).
func Classify(r *http.Request) (op, key string) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	_, key, _ = strings.Cut(path, "/")
	q := r.URL.Query()
	switch r.Method {
	case http.MethodGet:
		switch {
		case key == "" && q.Get("list-type") == "2":
			return ListObjectsV2, key
		case key == "" && q.Has("uploads"):
			return ListMultipartUploads, key
		case key != "":
			return GetObject, key
		}
	case http.MethodHead:
		if key != "" {
			return HeadObject, key
		}
	case http.MethodPut:
		switch {
		case key == "":
		case q.Has("partNumber") && q.Has("uploadId"):
			return UploadPart, key
		case r.Header.Get("X-Amz-Copy-Source") != "":
			return CopyObject, key
		case len(q) == 0 || q.Has("x-id"):
			return PutObject, key
		}
	case http.MethodPost:
		switch {
		case key != "" && q.Has("uploads"):
			return CreateMultipartUpload, key
		case key != "" && q.Has("uploadId"):
			return CompleteMultipartUpload, key
		}
	case http.MethodDelete:
		switch {
		case key != "" && q.Has("uploadId"):
			return AbortMultipartUpload, key
		case key != "":
			return DeleteObject, key
		}
	}
	return Other, key
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
