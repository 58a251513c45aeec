package kubecost

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// TLSConfig returns the Kubecost client's TLS configuration: the system roots plus every
// certificate in caPEM (KUBECOST_CA_CERTIFICATE_SECRET_NAME), which keeps Kubecost reachable if
// it is later fronted by a publicly trusted certificate; the host name must match either way.
// AWS clients never see this configuration.
//
// The bundle is checked even when verify is false, so a broken secret is reported when it is
// configured, not the day verification is turned back on. A bundle without certificates, with
// an unparsable one, or with a non-certificate block (a pasted private key) is an error; block
// contents are never echoed.
func TLSConfig(caPEM []byte, verify bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	var certs []*x509.Certificate
	if len(bytes.TrimSpace(caPEM)) > 0 {
		var err error
		if certs, err = parseBundle(caPEM); err != nil {
			return nil, err
		}
	}
	if !verify {
		cfg.InsecureSkipVerify = true
		return cfg, nil
	}
	if len(certs) == 0 {
		return cfg, nil // nil RootCAs: the system roots
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		// No system roots (a scratch image): trust the bundle alone.
		pool = x509.NewCertPool()
	}
	for _, c := range certs {
		pool.AddCert(c)
	}
	cfg.RootCAs = pool
	return cfg, nil
}

func parseBundle(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for n := 1; ; n++ {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("kubecost: CA bundle block %d is a %q block; a CA bundle holds only CERTIFICATE blocks", n, block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("kubecost: CA bundle certificate %d: %w", n, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("kubecost: CA bundle contains no PEM certificates (expected -----BEGIN CERTIFICATE----- blocks)")
	}
	return certs, nil
}

// BearerTokenFile reads an OIDC Kubecost's token from a file (KUBECOST_BEARER_TOKEN_FILE),
// cleaned by ParseBearerToken.
func BearerTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("kubecost: bearer token file: %w", err)
	}
	return ParseBearerToken(string(b), "file "+path)
}

// ParseBearerToken cleans a bearer token read from `from` (a file or a secret, for errors) of
// surrounding whitespace and a leading "Bearer ". The token is never part of an error.
func ParseBearerToken(raw, from string) (string, error) {
	tok := strings.TrimSpace(raw)
	// People paste the whole header value; the client adds "Bearer " itself.
	if len(tok) > 7 && strings.EqualFold(tok[:7], "bearer ") {
		tok = strings.TrimSpace(tok[7:])
	}
	if tok == "" {
		return "", fmt.Errorf("kubecost: bearer token from %s is empty", from)
	}
	// A space or control character would corrupt the header or smuggle another header line.
	for _, r := range tok {
		if r <= ' ' || r == 0x7f {
			return "", fmt.Errorf("kubecost: bearer token from %s contains whitespace or control characters", from)
		}
	}
	return tok, nil
}
