package s3store

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// These tests need no server: the recorder answers every request itself,
// so they show where the client would send it.

func TestNewClientAddressing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		opt       func(*s3.Options)
		wantHost  string
		wantPath  string
		pathStyle bool
	}{
		{
			name:     "AWS default endpoint: virtual-hosted",
			wantHost: "cost-data.s3.us-east-1.amazonaws.com", wantPath: "/a/b.parquet",
		},
		{
			name:     "AWS_ENDPOINT_URL_S3: path-style",
			env:      map[string]string{"AWS_ENDPOINT_URL_S3": "http://minio.example:9000"},
			wantHost: "minio.example:9000", wantPath: "/cost-data/a/b.parquet", pathStyle: true,
		},
		{
			name:     "AWS_ENDPOINT_URL: path-style",
			env:      map[string]string{"AWS_ENDPOINT_URL": "https://objects.example"},
			wantHost: "objects.example", wantPath: "/cost-data/a/b.parquet", pathStyle: true,
		},
		{
			name: "both: the S3-specific one wins",
			env: map[string]string{
				"AWS_ENDPOINT_URL":    "https://other.example",
				"AWS_ENDPOINT_URL_S3": "http://minio.example:9000",
			},
			wantHost: "minio.example:9000", wantPath: "/cost-data/a/b.parquet", pathStyle: true,
		},
		{
			name:     "explicit BaseEndpoint: path-style",
			opt:      func(o *s3.Options) { o.BaseEndpoint = aws.String("http://ceph.example:7480") },
			wantHost: "ceph.example:7480", wantPath: "/cost-data/a/b.parquet", pathStyle: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolateAWSEnv(t)
			t.Setenv("AWS_REGION", "us-east-1")
			t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			rec := &recorder{respond: okResponse}
			cfg, err := config.LoadDefaultConfig(t.Context(), config.WithHTTPClient(rec))
			if err != nil {
				t.Fatal(err)
			}
			var opts []func(*s3.Options)
			if tc.opt != nil {
				opts = append(opts, tc.opt)
			}
			client := NewClient(cfg, opts...)
			if got := client.Options().UsePathStyle; got != tc.pathStyle {
				t.Errorf("UsePathStyle = %v, want %v", got, tc.pathStyle)
			}
			s := newStore(t, client, Options{Bucket: "cost-data"})
			if err := s.Delete(t.Context(), "a/b.parquet"); err != nil {
				t.Fatal(err)
			}
			reqs := rec.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			if reqs[0].Host != tc.wantHost || reqs[0].Path != tc.wantPath {
				t.Errorf("request went to %s%s, want %s%s", reqs[0].Host, reqs[0].Path, tc.wantHost, tc.wantPath)
			}
		})
	}
}

// TestNewClientStandardRetryer pins the retry policy: the SDK's standard
// retryer with its defaults, still tunable through AWS_MAX_ATTEMPTS.
func TestNewClientStandardRetryer(t *testing.T) {
	isolateAWSEnv(t)
	t.Setenv("AWS_REGION", "us-east-1")
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := NewClient(cfg).Options().Retryer
	if _, ok := r.(*retry.Standard); !ok {
		t.Errorf("retryer is %T, want *retry.Standard", r)
	}
	if r.MaxAttempts() != retry.DefaultMaxAttempts {
		t.Errorf("MaxAttempts = %d, want the SDK default %d", r.MaxAttempts(), retry.DefaultMaxAttempts)
	}

	t.Setenv("AWS_MAX_ATTEMPTS", "7")
	cfg, err = config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := NewClient(cfg).Options().Retryer.MaxAttempts(); got != 7 {
		t.Errorf("with AWS_MAX_ATTEMPTS=7, MaxAttempts = %d", got)
	}
}

// TestExpectedBucketOwnerOnAbort checks that the abort of a failed
// multipart upload, sent on a detached context, still names the owner.
// The fake server accepts the upload and fails a part.
func TestExpectedBucketOwnerOnAbort(t *testing.T) {
	rec := &recorder{}
	rec.respond = func(req *http.Request) *http.Response {
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
		}
		switch operation(req) {
		case "CreateMultipartUpload":
			return xmlResponse(http.StatusOK, `<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>up-1</UploadId></InitiateMultipartUploadResult>`)
		case "UploadPart":
			return xmlResponse(http.StatusBadRequest, `<Error><Code>InvalidPart</Code><Message>no</Message></Error>`)
		}
		return okResponse(req)
	}
	client := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://fake.example"), UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}, HTTPClient: rec, RetryMaxAttempts: 1,
	})
	s := newStore(t, client, Options{Bucket: "bucket", ExpectedBucketOwner: owner, PartSize: 5 << 20})
	if err := s.Put(t.Context(), "k", io.LimitReader(zeros{}, 11<<20), nil, exporter.Precondition{}); err == nil {
		t.Fatal("Put succeeded although every part failed")
	}
	if rec.count("AbortMultipartUpload") == 0 {
		t.Fatal("the failed upload was not aborted")
	}
	for _, q := range rec.requests() {
		if q.Header.Get("X-Amz-Expected-Bucket-Owner") != owner {
			t.Errorf("%s sent without x-amz-expected-bucket-owner", q.Op)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func okResponse(req *http.Request) *http.Response {
	return &http.Response{
		StatusCode: http.StatusNoContent, Header: http.Header{}, Body: http.NoBody, Request: req,
	}
}

func xmlResponse(status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Header: http.Header{"Content-Type": {"application/xml"}},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}
}
