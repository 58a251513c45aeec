package awsauth

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// FetchSecret returns the current value of a Secrets Manager secret:
// SecretString, or SecretBinary as bytes. cfg should be Identity.Config, so
// the read uses the parent's credentials when chaining. region "" means
// cfg's region. Errors name the secret and region, never the value.
func FetchSecret(ctx context.Context, cfg aws.Config, region, name string) (string, error) {
	client := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) {
		if region != "" {
			o.Region = region
		}
	})
	if region == "" {
		region = cfg.Region
	}
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("awsauth: read secret %s in %s: %w", name, region, err)
	}
	switch {
	case out.SecretString != nil:
		return *out.SecretString, nil
	case out.SecretBinary != nil:
		return string(out.SecretBinary), nil
	}
	return "", fmt.Errorf("awsauth: secret %s in %s has no value", name, region)
}

// KubecostTLS is the TLS configuration for the Kubecost client: the CA
// bundle from secretName (if any) added to the system roots. It is for the
// Kubecost client only; AWS clients keep the system roots.
func KubecostTLS(ctx context.Context, cfg aws.Config, region, secretName string, verify bool) (*tls.Config, error) {
	var bundle []byte
	if secretName != "" {
		v, err := FetchSecret(ctx, cfg, region, secretName)
		if err != nil {
			return nil, err
		}
		bundle = []byte(v)
	}
	t, err := TLSConfig(bundle, verify)
	if err != nil && secretName != "" {
		return nil, fmt.Errorf("%w (secret %s)", err, secretName)
	}
	return t, err
}

// TLSConfig returns a client TLS configuration trusting the system roots
// plus every certificate in caPEM. Adding to the system pool instead of
// replacing it keeps Kubecost reachable if it is later fronted by a
// publicly trusted certificate; the host name must match either way.
//
// The bundle is checked even when verify is false, so a broken secret is
// reported when it is configured rather than on the day verification is
// turned back on. A bundle without certificates, with an unparsable one,
// or with a non-certificate block (a private key pasted by mistake) is an
// error; block contents are never echoed.
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
			return nil, fmt.Errorf("awsauth: CA bundle block %d is a %q block; a CA bundle holds only CERTIFICATE blocks", n, block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("awsauth: CA bundle certificate %d: %w", n, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("awsauth: CA bundle contains no PEM certificates (expected -----BEGIN CERTIFICATE----- blocks)")
	}
	return certs, nil
}

// BearerToken reads the token for a Kubecost behind OIDC from file or, if
// file is "", from the Secrets Manager secret secretName. Surrounding
// whitespace (a trailing newline) and a leading "Bearer " are dropped. It returns "" when neither is
// set. The token is never part of an error.
func BearerToken(ctx context.Context, cfg aws.Config, region, file, secretName string) (string, error) {
	var raw, from string
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("awsauth: bearer token file: %w", err)
		}
		raw, from = string(b), "file "+file
	case secretName != "":
		v, err := FetchSecret(ctx, cfg, region, secretName)
		if err != nil {
			return "", err
		}
		raw, from = v, "secret "+secretName
	default:
		return "", nil
	}
	tok := strings.TrimSpace(raw)
	// People paste the whole header value; the client adds "Bearer " itself.
	if len(tok) > 7 && strings.EqualFold(tok[:7], "bearer ") {
		tok = strings.TrimSpace(tok[7:])
	}
	if tok == "" {
		return "", fmt.Errorf("awsauth: bearer token from %s is empty", from)
	}
	// A space or control character inside would corrupt the Authorization
	// header or smuggle another header line.
	for _, r := range tok {
		if r <= ' ' || r == 0x7f {
			return "", fmt.Errorf("awsauth: bearer token from %s contains whitespace or control characters", from)
		}
	}
	return tok, nil
}
