package kubecost

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

func TestTLSConfigBundles(t *testing.T) {
	t.Parallel()
	caPEM, _, err := kubecostsim.GenerateCert()
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := "-----BEGIN PRIVATE KEY-----\nTUlJQ1hRSUJBQUtCZ1FDcXNlY3JldC1rZXktbWF0ZXJpYWw=\n-----END PRIVATE KEY-----\n"
	for _, tc := range []struct {
		name, pem string
		verify    bool
		wantErr   string
		wantRoots bool // RootCAs holds a custom pool
	}{
		{"no bundle: system roots", "", true, "", false},
		{"blank bundle: system roots", " \n", true, "", false},
		{"private CA", string(caPEM), true, "", true},
		{"two certificates with comments", "# internal CA\n" + string(caPEM) + "# again\n" + string(caPEM), true, "", true},
		{"garbage", "not a certificate", true, "contains no PEM certificates", false},
		{"private key pasted by mistake", keyPEM, true, `block 1 is a "PRIVATE KEY" block`, false},
		{"key after a certificate", string(caPEM) + keyPEM, true, `block 2 is a "PRIVATE KEY" block`, false},
		{"corrupt certificate", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", true, "CA bundle certificate 1", false},
		{"garbage is reported even with TLS_VERIFY off", "not a certificate", false, "contains no PEM certificates", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := TLSConfig([]byte(tc.pem), tc.verify)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "TUlJ") {
					t.Errorf("error echoes the block content: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (cfg.RootCAs != nil) != tc.wantRoots || cfg.InsecureSkipVerify != !tc.verify || cfg.MinVersion != tls.VersionTLS12 {
				t.Errorf("cfg: RootCAs set %v, InsecureSkipVerify %v, MinVersion %x", cfg.RootCAs != nil, cfg.InsecureSkipVerify, cfg.MinVersion)
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	file := func(content string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("token-%d", n)) // never the content: the test checks errors for it
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const tok = "eyJhbGciOi.payload-bearer.signature"
	for _, tc := range []struct {
		name, file, want, wantErr string
	}{
		{"trailing newline", file(tok + "\n"), tok, ""},
		{"header value pasted", file("Bearer " + tok), tok, ""},
		{"empty file", file(" \n"), "", "is empty"},
		{"space inside", file("abc def-secret-part"), "", "contains whitespace or control characters"},
		{"missing file", filepath.Join(dir, "nope"), "", "bearer token file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BearerTokenFile(tc.file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "def-secret-part") {
					t.Errorf("error echoes the token: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	// A token from a secret is cleaned the same way and never echoed.
	if got, err := ParseBearerToken("bearer "+tok+"\n", "secret kubecost/token"); got != tok || err != nil {
		t.Errorf("secret token: %q, %v; want %q", got, err, tok)
	}
	if _, err := ParseBearerToken("abc def-secret-part", "secret kubecost/token"); err == nil || strings.Contains(err.Error(), "def-secret-part") || !strings.Contains(err.Error(), "secret kubecost/token") {
		t.Errorf("bad secret token: %v", err)
	}
}
