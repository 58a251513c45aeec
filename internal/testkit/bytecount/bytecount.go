// Package bytecount is a reverse proxy in front of an S3 endpoint that
// counts what clients GET: requests, how many asked for a range, and the
// body bytes the server sent. Tests and the bench put it between a reader
// and MinIO to show what the reader fetches, independently of the
// reader's own counters.
package bytecount

import (
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
)

// Proxy is a running counting proxy. Close it when done.
type Proxy struct {
	URL string
	// GETs is the GET requests; Ranged those with a Range header; Bytes
	// the GET response bodies' bytes.
	GETs, Ranged, Bytes atomic.Int64
	srv                 *http.Server
}

// Start starts a proxy on 127.0.0.1 in front of target (a base URL).
// Requests keep their Host, which their signatures cover.
func Start(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + ln.Addr().String()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.Method == http.MethodGet && resp.Request.URL.Query().Get("list-type") == "" {
				resp.Body = &counted{ReadCloser: resp.Body, n: &p.Bytes}
			}
			return nil
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "" {
			p.GETs.Add(1)
			if r.Header.Get("Range") != "" {
				p.Ranged.Add(1)
			}
		}
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() error { return p.srv.Close() }

type counted struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *counted) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	c.n.Add(int64(n))
	return n, err
}
