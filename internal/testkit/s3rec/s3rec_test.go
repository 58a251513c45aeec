package s3rec

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"os"
	"testing"
)

// TestProxyRecordsTheAddressedHost: a client that trusts the proxy's CA
// reaches the recorder for any host, over TLS checked against that host,
// and the recorder keeps the host, the path and the call.
func TestProxyRecordsTheAddressedHost(t *testing.T) {
	var rec Recorder
	p, err := rec.StartProxy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pem, err := os.ReadFile(p.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	proxy, _ := url.Parse(p.URL)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Get("https://ap-111122223333.s3-accesspoint.eu-west-1.amazonaws.com/?list-type=2&prefix=a%2F")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := rec.Take()
	if resp.StatusCode != http.StatusOK || len(got) != 1 || got[0].Op != "ListObjectsV2" ||
		got[0].Host != "ap-111122223333.s3-accesspoint.eu-west-1.amazonaws.com" || got[0].Path != "/" || got[0].Query.Get("prefix") != "a/" {
		t.Errorf("status %d, recorded %+v", resp.StatusCode, got)
	}
	// Without the CA the certificate is refused: the TLS is real.
	plain := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	if _, err := plain.Get("https://s3.amazonaws.com/"); err == nil {
		t.Error("a client without the proxy's CA trusted its certificate")
	}
}
