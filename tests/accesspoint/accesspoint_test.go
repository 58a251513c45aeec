// Package accesspoint_test opens the archive the way every command does
// (destination.Open: the credential chain of awsauth, then the store)
// with an S3 access point as the bucket, and records what the unmodified
// AWS SDK client sends: every HTTPS request goes through a local proxy
// (HTTPS_PROXY) to a recorder that answers with certificates from its own
// CA (AWS_CA_BUNDLE), so the requests are those AWS would receive.
package accesspoint_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/s3rec"
)

var rec s3rec.Recorder

// TestMain sets the proxy variables before any request: net/http reads
// them once per process (ProxyFromEnvironment), so they cannot be set by
// a test.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "s3rec")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p, err := rec.StartProxy(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for k, v := range map[string]string{
		"HTTPS_PROXY": p.URL, "https_proxy": p.URL, "NO_PROXY": "", "no_proxy": "", "AWS_CA_BUNDLE": p.CAFile,
		// The SDK's own sources: static keys, and nothing from the
		// developer's ~/.aws or from an instance profile.
		"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "AWS_ROLE_ARN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
		"AWS_S3_USE_ARN_REGION": "",
		// One attempt: the closed STS port is not retried.
		"AWS_MAX_ATTEMPTS": "1",
	} {
		os.Setenv(k, v)
	}
	code := m.Run()
	p.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestOpenAccessPoint: through destination.Open, with an access point
// alias or ARN from S3_BUCKET_NAME or config.bucket, every call of the
// store (s3rec.Exercise) goes where AWS documents (s3rec.Check; the forms
// are in exporter/destination's TestAccessPointRequests and in
// docs/object-store-config.md, "Access points").
func TestOpenAccessPoint(t *testing.T) {
	for _, tc := range s3rec.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			// Nothing listens at STS: the identity check fails at once and
			// is only a warning.
			env := map[string]string{"AWS_ENDPOINT_URL_STS": "http://" + closedAddr(t)}
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			s := &destination.Settings{S3BucketName: tc.Bucket, S3PartSizeMiB: 5, RequestTimeout: exporter.Seconds(time.Minute)}
			if tc.File != "" {
				s.ObjectStoreConfigFile = filepath.Join(t.TempDir(), "object-store.yaml")
				if err := os.WriteFile(s.ObjectStoreConfigFile, []byte(tc.File), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s.Load(lookup)
			for _, r := range destination.Rules() {
				// The cluster's region, us-east-2, is the default of Region.
				r.Check(s, destination.Scope{Partition: "aws", Region: "us-east-2"}, func(v, format string, args ...any) {
					t.Fatalf("%s=%q refused: %s", r.Var, v, fmt.Sprintf(format, args...))
				})
			}
			a, err := destination.Open(context.Background(), s, destination.Env{
				Lookup: lookup, Session: "prod", Home: "111122223333",
			})
			if err != nil {
				t.Fatal(err)
			}
			rec.Take()
			s3rec.Exercise(t, a.Store)
			s3rec.Check(t, rec.Take(), tc.WantHost, tc.WantRegion)
		})
	}
}

func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
