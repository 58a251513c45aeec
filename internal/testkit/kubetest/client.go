package kubetest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// APIError is a non-2xx answer of the API server.
type APIError struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("kube: %s %s: %d %s", e.Method, e.Path, e.Code, e.Body)
}

// IsNotFound reports whether err is the API server's 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == http.StatusNotFound
}

// client speaks JSON to the API server with the admin token. The tests need
// a handful of calls, so plain REST keeps client-go out of the module.
type client struct {
	base, token string
	http        *http.Client
}

func newClient(base, token, caFile string) (*client, error) {
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("kube: no certificate in %s", caFile)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &client{base: base, token: token, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}, nil
}

// do sends in (JSON, unless nil) and decodes the answer into out (unless nil).
func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("kube: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("kube: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("kube: read %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &APIError{Method: method, Path: path, Code: resp.StatusCode, Body: string(b)}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("kube: decode %s %s: %w", method, path, err)
		}
	}
	return nil
}

func httpOK(url string) error {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
