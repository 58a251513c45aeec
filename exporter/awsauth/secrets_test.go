package awsauth

import (
	"crypto/tls"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/awsfake"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// kubecostOverTLS is the Kubecost simulator served with a certificate
// only a private CA vouches for, behind an OIDC proxy that wants a bearer
// token. It returns the CA bundle a client must trust.
func kubecostOverTLS(t *testing.T, bearer string) (*httptest.Server, []byte) {
	t.Helper()
	caPEM, cert, err := kubecostsim.GenerateCert()
	if err != nil {
		t.Fatal(err)
	}
	sim := kubecostsim.New(kubecostsim.Config{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+bearer {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	// The failed handshake of the no-bundle case is expected; keep the
	// server's complaint about it out of the test output.
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, caPEM
}

// availableDays runs the real Kubecost client as the exporter configures it.
func availableDays(t *testing.T, url string, tlsCfg *tls.Config, bearer string, log *slog.Logger) ([]exporter.DayTotal, error) {
	t.Helper()
	c, err := kubecost.New(kubecost.Options{
		URL: url + "/model/allocation", Aggregate: "cluster", Step: 24 * time.Hour,
		Projection: schema.NewProjection("", "", nil, nil),
		TLS:        tlsCfg, BearerToken: bearer, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	return c.AvailableDays(t.Context(), now.AddDate(0, 0, -7), now.AddDate(0, 0, -2))
}

// The CA bundle and bearer token come from Secrets Manager in another
// region, read with the parent's credentials, and let the Kubecost client
// reach the simulator whose certificate only the private CA vouches for.
// The same query without the bundle fails, naming the fix.
func TestSecretsManagerCABundleReachesPrivateKubecost(t *testing.T) {
	t.Parallel()
	s := newIRSA(t)
	s.fake.AllowAssumeRole(childARN, parentARN, awsfake.RandomIssuer())
	const bearer = "eyJhbGciOiJSUzI1NiJ9.oidc-bearer-for-kubecost.sig"
	kc, caPEM := kubecostOverTLS(t, bearer)
	s.fake.PutSecret("kubecost/ca-bundle", string(caPEM), parentARN)
	s.fake.PutSecret("kubecost/bearer", bearer+"\n", parentARN)
	log, logs := newLogger(t)

	id, err := Load(t.Context(), s.input(log, parentARN))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	tlsCfg, err := KubecostTLS(t.Context(), id.Config, "eu-central-1", "kubecost/ca-bundle", true)
	if err != nil {
		t.Fatalf("KubecostTLS: %v", err)
	}
	tok, err := BearerToken(t.Context(), id.Config, "eu-central-1", "", "kubecost/bearer")
	if err != nil || tok != bearer {
		t.Fatalf("BearerToken = %d chars, %v; want the stored token without its newline", len(tok), err)
	}
	days, err := availableDays(t, kc.URL, tlsCfg, tok, log)
	if err != nil || len(days) == 0 {
		t.Fatalf("AvailableDays over TLS with the bundle: %v, %v; want days", days, err)
	}

	// Both reads went to the Secrets Manager endpoint, in the secret's
	// region, signed by the parent session.
	parentKey := s.fake.CallsTo("AssumeRole")[0].IssuedKeyID
	reads := s.fake.CallsTo("GetSecretValue")
	if len(reads) != 2 {
		t.Fatalf("%d GetSecretValue calls, want 2", len(reads))
	}
	for _, r := range reads {
		if r.ErrorCode != "" || r.Region != "eu-central-1" || r.AccessKeyID != parentKey {
			t.Errorf("GetSecretValue %+v; want success in eu-central-1 signed by the parent key", r)
		}
	}

	// Same run, system roots only: the private CA is unknown.
	noBundle, err := TLSConfig(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = availableDays(t, kc.URL, noBundle, tok, log)
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") ||
		!strings.Contains(err.Error(), "KUBECOST_CA_CERTIFICATE_SECRET_NAME") {
		t.Errorf("AvailableDays without the bundle: err = %v, want an unknown-authority failure naming the fix", err)
	}
	t.Logf("without the bundle: %v", err)
	// TLS_VERIFY=false connects without checking (config warns about it).
	insecure, err := TLSConfig(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := availableDays(t, kc.URL, insecure, tok, log); err != nil {
		t.Errorf("AvailableDays with TLS_VERIFY=false: %v", err)
	}
	assertNoSecrets(t, logs.String(), s.secrets(bearer))
}

func TestFetchSecretErrors(t *testing.T) {
	t.Parallel()
	s := newIRSA(t)
	s.fake.AllowAssumeRole(childARN, parentARN, awsfake.RandomIssuer())
	s.fake.PutSecret("kubecost/ca-bundle", "value-only-the-parent-may-read", parentARN)
	s.fake.PutSecretBinary("kubecost/binary", []byte("binary-secret-value"))
	log, logs := newLogger(t)

	parent, err := Load(t.Context(), s.input(log, parentARN))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := FetchSecret(t.Context(), parent.Config, "", "kubecost/binary"); err != nil || v != "binary-secret-value" {
		t.Errorf("SecretBinary = %q, %v", v, err)
	}
	_, err = FetchSecret(t.Context(), parent.Config, "us-west-2", "kubecost/missing")
	if !isCode(err, "ResourceNotFoundException") || !strings.Contains(err.Error(), "awsauth: read secret kubecost/missing in us-west-2") {
		t.Errorf("missing secret: %v", err)
	}
	// Without chaining, the child may not read the parent's secret: proof
	// that the successful reads above really used the parent.
	child, err := Load(t.Context(), s.input(log, ""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = FetchSecret(t.Context(), child.Config, "", "kubecost/ca-bundle")
	if !isCode(err, "AccessDeniedException") {
		t.Errorf("child reading the parent's secret: %v, want AccessDeniedException", err)
	}
	// A secret that is not a CA bundle is reported without its content.
	_, err = KubecostTLS(t.Context(), parent.Config, "", "kubecost/binary", true)
	if err == nil || strings.Contains(err.Error(), "binary-secret-value") || !strings.Contains(err.Error(), "kubecost/binary") {
		t.Errorf("non-PEM secret: %v", err)
	}
	assertNoSecrets(t, logs.String(), s.secrets())
}

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
		writeFile(t, p, content)
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
			got, err := BearerToken(t.Context(), aws.Config{}, "", tc.file, "")
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
	if got, err := BearerToken(t.Context(), aws.Config{}, "", "", ""); got != "" || err != nil {
		t.Errorf("no token configured: %q, %v; want empty", got, err)
	}
}
