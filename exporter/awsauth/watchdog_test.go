package awsauth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/faultproxy"
)

// stalling puts a proxy in front of url that accepts every request and
// never answers.
func stalling(t *testing.T, url string) string {
	t.Helper()
	p, err := faultproxy.New(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.SetRules(faultproxy.Rule{Action: faultproxy.Stall})
	return p.URL
}

// TestStalledSTSIsBounded: STS accepts AssumeRoleWithWebIdentity and never
// answers. Load must fail within the bound and retries, naming the call
// and the variable that sets the bound.
func TestStalledSTSIsBounded(t *testing.T) {
	s := newIRSA(t)
	s.env["AWS_ENDPOINT_URL_STS"] = stalling(t, s.fake.STSURL)
	log, _ := newLogger(t)
	in := s.input(log, "")
	in.RequestTimeout, in.RequestTimeoutSetting = 300*time.Millisecond, "S3_REQUEST_TIMEOUT"
	start := time.Now()
	_, err := Load(t.Context(), in)
	if err == nil {
		t.Fatal("Load succeeded against a stalled STS")
	}
	took := time.Since(start)
	for _, want := range []string{"AssumeRoleWithWebIdentity", "no progress for 300ms", "S3_REQUEST_TIMEOUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	var stall *StallError
	if !errors.As(err, &stall) {
		t.Errorf("error is not a StallError: %v", err)
	}
	t.Logf("failed after %s: %v", took.Round(time.Millisecond), err)
}

// TestStalledSecretsManagerIsBounded: the same for GetSecretValue.
func TestStalledSecretsManagerIsBounded(t *testing.T) {
	s := newIRSA(t)
	s.fake.PutSecret("kubecost/ca", "not read")
	s.env["AWS_ENDPOINT_URL_SECRETS_MANAGER"] = stalling(t, s.fake.SecretsURL)
	log, _ := newLogger(t)
	in := s.input(log, "")
	in.RequestTimeout, in.RequestTimeoutSetting = 300*time.Millisecond, "S3_REQUEST_TIMEOUT"
	id, err := Load(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = FetchSecret(ctx, id.Config, region, "kubecost/ca")
	if err == nil {
		t.Fatal("FetchSecret succeeded against a stalled Secrets Manager")
	}
	if ctx.Err() != nil {
		t.Fatal("the call was not bounded by the watchdog, only by the test's deadline")
	}
	for _, want := range []string{"GetSecretValue", "kubecost/ca", "no progress for 300ms", "S3_REQUEST_TIMEOUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
