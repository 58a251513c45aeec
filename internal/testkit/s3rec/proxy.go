package s3rec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Proxy is an HTTPS proxy on 127.0.0.1: every CONNECT tunnel ends at the
// recorder, over TLS with a certificate for the host asked, issued by the
// proxy's own CA (CAFile, PEM). A client that trusts CAFile and uses URL
// as its proxy talks to the recorder as it would to the real host.
type Proxy struct {
	URL    string
	CAFile string

	front   *httptest.Server
	back    *http.Server
	tunnels *tunnels
}

// StartProxy starts a proxy in front of r; dir holds the CA file.
func (r *Recorder) StartProxy(dir string) (*Proxy, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "s3rec test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	p := &Proxy{CAFile: filepath.Join(dir, "s3rec-ca.pem"), tunnels: &tunnels{conns: make(chan net.Conn), done: make(chan struct{})}}
	if err := os.WriteFile(p.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		return nil, err
	}
	leaf := func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: hello.ServerName},
			DNSNames: []string{hello.ServerName}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
	}
	p.back = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = p.back.Serve(tls.NewListener(p.tunnels, &tls.Config{GetCertificate: leaf, MinVersion: tls.VersionTLS12}))
	}()
	p.front = httptest.NewServer(http.HandlerFunc(p.connect))
	p.URL = p.front.URL
	return p, nil
}

// connect answers CONNECT and hands the tunnel to the TLS listener.
func (p *Proxy) connect(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		conn.Close()
		return
	}
	select {
	case p.tunnels.conns <- conn:
	case <-p.tunnels.done:
		conn.Close()
	}
}

// Close stops the proxy.
func (p *Proxy) Close() {
	p.front.Close()
	_ = p.back.Close() // closes the tunnels
}

// tunnels is the TLS server's listener: the proxy's CONNECT tunnels.
type tunnels struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *tunnels) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *tunnels) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *tunnels) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
