package s3store

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// isolateAWSEnv clears every AWS_* variable for the test and points the
// shared config files at nothing, so the developer's ~/.aws cannot change
// what the SDK resolves. Tests that call it cannot run in parallel.
func isolateAWSEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "") // registers the restore
			os.Unsetenv(k)
		}
	}
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// minioClient builds a client the way the exporter does: the endpoint and
// credentials come from the environment through config.LoadDefaultConfig,
// then NewClient. It proves that AWS_ENDPOINT_URL_S3 alone reaches MinIO.
func minioClient(t *testing.T, srv *miniotest.Server, rec *recorder) *s3.Client {
	t.Helper()
	isolateAWSEnv(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	t.Setenv("AWS_REGION", srv.Region)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	var opts []func(*config.LoadOptions) error
	if rec != nil {
		opts = append(opts, config.WithHTTPClient(rec))
	}
	cfg, err := config.LoadDefaultConfig(t.Context(), opts...)
	if err != nil {
		t.Fatalf("LoadDefaultConfig: %v", err)
	}
	return NewClient(cfg)
}

// NewClient is the client the exporter builds with no ClientConfig of the
// destination's: ClientConfig{}.New.
func NewClient(awsCfg aws.Config, optFns ...func(*s3.Options)) *s3.Client {
	return ClientConfig{}.New(awsCfg, optFns...)
}

// request is what the recorder keeps of one HTTP request.
type request struct {
	Op, Method, Host, Path string
	Query                  url.Values
	Header                 http.Header
}

// recorder is an aws.HTTPClient that records every request on its way to
// the real transport. It sees exactly what goes on the wire, including the
// multipart calls the store makes for one Put.
type recorder struct {
	next aws.HTTPClient
	mu   sync.Mutex
	reqs []request
	// respond, when set, answers instead of the network.
	respond func(*http.Request) *http.Response
}

func newRecorder() *recorder { return &recorder{next: awshttp.NewBuildableClient()} }

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, request{Op: operation(req), Method: req.Method, Host: req.URL.Host, Path: req.URL.EscapedPath(), Query: req.URL.Query(), Header: req.Header.Clone()})
	r.mu.Unlock()
	if r.respond != nil {
		return r.respond(req), nil
	}
	return r.next.Do(req)
}

func (r *recorder) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.reqs...)
}

func (r *recorder) count(op string) int {
	n := 0
	for _, q := range r.requests() {
		if q.Op == op {
			n++
		}
	}
	return n
}

// operation names the S3 API call behind a path-style request.
func operation(req *http.Request) string {
	q := req.URL.Query()
	_, uploads := q["uploads"]
	switch m := req.Method; {
	case m == http.MethodPost && uploads:
		return "CreateMultipartUpload"
	case m == http.MethodPost && q.Has("uploadId"):
		return "CompleteMultipartUpload"
	case m == http.MethodPut && q.Has("uploadId"):
		return "UploadPart"
	case m == http.MethodDelete && q.Has("uploadId"):
		return "AbortMultipartUpload"
	case m == http.MethodGet && q.Get("list-type") == "2":
		return "ListObjectsV2"
	case m == http.MethodGet && uploads:
		return "ListMultipartUploads"
	case m == http.MethodPut:
		return "PutObject"
	case m == http.MethodGet:
		return "GetObject"
	case m == http.MethodHead:
		return "HeadObject"
	case m == http.MethodDelete:
		return "DeleteObject"
	}
	return req.Method + " " + req.URL.String()
}

// pendingUploads lists the unfinished multipart uploads in bucket.
func pendingUploads(ctx context.Context, t *testing.T, c *s3.Client, bucket string) []string {
	t.Helper()
	out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("ListMultipartUploads(%s): %v", bucket, err)
	}
	var ids []string
	for _, u := range out.Uploads {
		ids = append(ids, aws.ToString(u.Key)+" upload "+aws.ToString(u.UploadId))
	}
	return ids
}

// newStore returns a Store on a fresh bucket or fails the test.
// testPartSize is the destination's default S3_PART_SIZE_MIB, which a
// test that does not care about the part size writes with.
const testPartSize = 8 << 20

func newStore(t *testing.T, c *s3.Client, opts Options) *Store {
	t.Helper()
	if opts.PartSize == 0 {
		opts.PartSize = testPartSize
	}
	s, err := New(c, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}
