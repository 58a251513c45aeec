package awsauth

import (
	"crypto/tls"
	"io"
	stdlog "log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	bundle, err := FetchSecret(t.Context(), id.Config, "eu-central-1", "kubecost/ca-bundle")
	if err != nil {
		t.Fatalf("FetchSecret: %v", err)
	}
	tlsCfg, err := kubecost.TLSConfig([]byte(bundle), true)
	if err != nil {
		t.Fatalf("TLSConfig: %v", err)
	}
	raw, err := FetchSecret(t.Context(), id.Config, "eu-central-1", "kubecost/bearer")
	if err != nil {
		t.Fatalf("FetchSecret: %v", err)
	}
	tok, err := kubecost.ParseBearerToken(raw, "secret kubecost/bearer")
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
	noBundle, err := kubecost.TLSConfig(nil, true)
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
	insecure, err := kubecost.TLSConfig(nil, false)
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
	if v, err := FetchSecret(t.Context(), parent.Config, region, "kubecost/binary"); err != nil || v != "binary-secret-value" {
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
	_, err = FetchSecret(t.Context(), child.Config, region, "kubecost/ca-bundle")
	if !isCode(err, "AccessDeniedException") {
		t.Errorf("child reading the parent's secret: %v, want AccessDeniedException", err)
	}
	// A secret that is not a CA bundle is reported without its content.
	v, err := FetchSecret(t.Context(), parent.Config, region, "kubecost/binary")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubecost.TLSConfig([]byte(v), true); err == nil || strings.Contains(err.Error(), "binary-secret-value") {
		t.Errorf("non-PEM secret: %v", err)
	}
	assertNoSecrets(t, logs.String(), s.secrets())
}
