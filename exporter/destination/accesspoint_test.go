package destination

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/awsauth"
)

// wireRequest is one request as it reached the recording endpoint: the
// host the SDK addressed (the Host header), the path, the query and the
// headers, with the SigV4 credential scope read off Authorization.
type wireRequest struct {
	op, host, path  string
	query           url.Values
	header          http.Header
	region, service string // the credential scope
	hostSigned      bool
}

// recordingS3 is an S3 endpoint on 127.0.0.1 that records every request and
// answers each call the store makes; redirect sends the SDK's requests to
// it, whatever host they are addressed to, keeping that host as the Host
// header.
type recordingS3 struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []wireRequest
}

func newRecordingS3(t *testing.T) *recordingS3 {
	r := &recordingS3{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// Do is the SDK's HTTP client: the request goes over TCP to the recorder,
// unchanged but for where it is dialled.
func (r *recordingS3) Do(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Host = cmp.Or(req.Host, req.URL.Host)
	out.URL.Scheme, out.URL.Host = "http", strings.TrimPrefix(r.srv.URL, "http://")
	return r.srv.Client().Transport.RoundTrip(out)
}

func (r *recordingS3) serve(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	q := req.URL.Query()
	op := "?"
	switch {
	case req.Method == http.MethodGet && q.Get("list-type") == "2":
		op = "ListObjectsV2"
	case req.Method == http.MethodPut && q.Has("partNumber"):
		op = "UploadPart"
	case req.Method == http.MethodPut:
		op = "PutObject"
	case req.Method == http.MethodPost && q.Has("uploads"):
		op = "CreateMultipartUpload"
	case req.Method == http.MethodPost && q.Has("uploadId"):
		op = "CompleteMultipartUpload"
	}
	wr := wireRequest{op: op, host: req.Host, path: req.URL.EscapedPath(), query: q, header: req.Header.Clone()}
	// AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/<service>/aws4_request, SignedHeaders=..., Signature=...
	for _, f := range strings.Split(strings.TrimPrefix(req.Header.Get("Authorization"), "AWS4-HMAC-SHA256 "), ", ") {
		if v, ok := strings.CutPrefix(f, "Credential="); ok {
			if scope := strings.Split(v, "/"); len(scope) == 5 {
				wr.region, wr.service = scope[2], scope[3]
			}
		}
		if v, ok := strings.CutPrefix(f, "SignedHeaders="); ok {
			wr.hostSigned = slices.Contains(strings.Split(v, ";"), "host")
		}
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, wr)
	r.mu.Unlock()
	const ns = `xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`
	w.Header().Set("ETag", `"5d41402abc4b2a76b9719d911017c592"`)
	switch op {
	case "ListObjectsV2":
		fmt.Fprintf(w, `<ListBucketResult %s><KeyCount>1</KeyCount><IsTruncated>false</IsTruncated>`+
			`<Contents><Key>costs/day.parquet</Key><Size>5</Size><ETag>"e"</ETag></Contents></ListBucketResult>`, ns)
	case "CreateMultipartUpload":
		fmt.Fprintf(w, `<InitiateMultipartUploadResult %s><UploadId>up-1</UploadId></InitiateMultipartUploadResult>`, ns)
	case "CompleteMultipartUpload":
		fmt.Fprintf(w, `<CompleteMultipartUploadResult %s><ETag>"c-2"</ETag></CompleteMultipartUploadResult>`, ns)
	case "PutObject", "UploadPart":
	default:
		http.Error(w, "unexpected "+req.Method+" "+req.URL.String(), http.StatusNotImplemented)
	}
}

func (r *recordingS3) take() []wireRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// apSettings are settings whose bucket comes from S3_BUCKET_NAME (file
// "") or from an object-store file's config.bucket, loaded and checked as
// a run checks them: every rule must pass.
func apSettings(t *testing.T, bucket, file string) *Settings {
	t.Helper()
	s := &Settings{S3BucketName: bucket, S3PartSizeMiB: 5}
	if file != "" {
		s.S3BucketName = ""
		s.ObjectStoreConfigFile = filepath.Join(t.TempDir(), "object-store.yaml")
		if err := os.WriteFile(s.ObjectStoreConfigFile, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.Load(func(string) (string, bool) { return "", false })
	for _, r := range Rules() {
		r.Check(s, Scope{Partition: "aws", Accounts: []string{"111122223333"}}, func(v, format string, args ...any) {
			t.Fatalf("%s=%q refused: %s", r.Var, v, fmt.Sprintf(format, args...))
		})
	}
	return s
}

// TestAccessPointRequests sends the store's calls (a listing, a
// create-only and a replace-only PutObject, a create-only multipart
// upload) through the destination's own client and store, with an access
// point alias or ARN as the bucket from S3_BUCKET_NAME and from
// config.bucket, and holds each request to AWS's documented endpoints:
//
//   - an alias is used as a bucket name
//     (https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-points-alias.html),
//     so virtual-hosted style, https://<alias>.s3.<region>.amazonaws.com/<key>
//     (https://docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html);
//   - an ARN reaches the access point's own host,
//     https://<name>-<account>.s3-accesspoint.<region>.amazonaws.com/<key>
//     (https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-points-naming.html,
//     using-access-points.html), the ARN's region, whatever the cluster's;
//   - both are signed with SigV4 for that region and the service s3, the
//     host among the signed headers
//     (access-points-restrictions-limitations-naming-rules.html: access
//     points take Signature Version 4 and virtual-hosted-style requests).
func TestAccessPointRequests(t *testing.T) {
	const (
		alias = "cost-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias"
		arn   = "arn:aws:s3:eu-west-1:444455556666:accesspoint/cost-ap"
	)
	for _, tc := range []struct {
		name, bucket, file, wantHost, wantRegion string
	}{
		{"alias in S3_BUCKET_NAME", alias, "", alias + ".s3.us-east-2.amazonaws.com", "us-east-2"},
		{"arn in S3_BUCKET_NAME", arn, "", "cost-ap-444455556666.s3-accesspoint.eu-west-1.amazonaws.com", "eu-west-1"},
		{"alias in config.bucket", "", "type: S3\nconfig:\n  bucket: " + alias + "\n  endpoint: s3.eu-central-1.amazonaws.com\n  part_size: 5242880\n",
			alias + ".s3.eu-central-1.amazonaws.com", "eu-central-1"},
		{"arn in config.bucket", "", "type: S3\nconfig:\n  bucket: " + arn + "\n  endpoint: s3.amazonaws.com\n  part_size: 5242880\n",
			"cost-ap-444455556666.s3-accesspoint.eu-west-1.amazonaws.com", "eu-west-1"},
		// A PrivateLink interface endpoint for access points is a custom
		// endpoint, before which the SDK names the access point
		// (endpoints_test.go "SDK::Host + access point ARN@us-west-2").
		{"arn in config.bucket through privatelink", "", "type: S3\nconfig:\n  bucket: " + arn +
			"\n  endpoint: accesspoint.vpce-1a2b3c4d-5e6f.s3.eu-west-1.vpce.amazonaws.com\n  part_size: 5242880\n",
			"cost-ap-444455556666.accesspoint.vpce-1a2b3c4d-5e6f.s3.eu-west-1.vpce.amazonaws.com", "eu-west-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecordingS3(t)
			s := apSettings(t, tc.bucket, tc.file)
			// The run's configuration: the cluster's region, which is
			// neither the alias's bucket's (a file names that) nor the
			// ARN's.
			id := &awsauth.Identity{Config: aws.Config{
				Region: "us-east-2", HTTPClient: rec, RetryMaxAttempts: 1,
				Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
			}}
			// awsauth hands the SDK the file's custom endpoint as
			// AWS_ENDPOINT_URL_S3 (AWSLookup); here it is set directly.
			if e, ok := s.AWSLookup(func(string) (string, bool) { return "", false })("AWS_ENDPOINT_URL_S3"); ok {
				id.Config.BaseEndpoint = aws.String(e)
			}
			store, err := s.openS3(Env{Home: "111122223333"}, id)
			if err != nil {
				t.Fatal(err)
			}
			exerciseStore(t, store)
			checkRequests(t, rec.take(), tc.wantHost, tc.wantRegion)
		})
	}
}

// exerciseStore lists, puts a small object create-only and replace-only,
// and a two-part object create-only.
func exerciseStore(t *testing.T, store exporter.ObjectStore) {
	t.Helper()
	ctx := context.Background()
	var keys []string
	if err := store.List(ctx, "costs/", "", func(o exporter.ObjectInfo) error { keys = append(keys, o.Key); return nil }); err != nil {
		t.Fatalf("list: %v", err)
	}
	if !slices.Equal(keys, []string{"costs/day.parquet"}) {
		t.Errorf("listed %v", keys)
	}
	if err := store.Put(ctx, "costs/small.parquet", strings.NewReader("hello"), nil, exporter.CreateOnly); err != nil {
		t.Fatalf("put create-only: %v", err)
	}
	if err := store.Put(ctx, "costs/small.parquet", strings.NewReader("hello"), nil,
		exporter.Precondition{IfMatch: `"5d41402abc4b2a76b9719d911017c592"`}); err != nil {
		t.Fatalf("put replace-only: %v", err)
	}
	big := bytes.Repeat([]byte{'x'}, 5<<20+1) // two parts of 5 MiB
	if err := store.Put(ctx, "costs/big.parquet", bytes.NewReader(big), nil, exporter.CreateOnly); err != nil {
		t.Fatalf("put multipart: %v", err)
	}
}

// checkRequests holds every request to the host, region and signing name
// AWS documents, and each call to its path and conditional headers.
func checkRequests(t *testing.T, reqs []wireRequest, host, region string) {
	t.Helper()
	var ops []string
	for _, r := range reqs {
		ops = append(ops, r.op)
		if r.host != host || r.region != region || r.service != "s3" || !r.hostSigned {
			t.Errorf("%s: host %q, signed for %s/%s (host signed %v); want %q, %s/s3", r.op, r.host, r.region, r.service, r.hostSigned, host, region)
		}
		wantPath := map[string]string{"ListObjectsV2": "/", "PutObject": "/costs/small.parquet"}[r.op]
		if strings.Contains(r.op, "Multipart") || r.op == "UploadPart" {
			wantPath = "/costs/big.parquet"
		}
		if r.path != wantPath {
			t.Errorf("%s: path %q, want %q (the access point is named in the host only)", r.op, r.path, wantPath)
		}
	}
	want := []string{"ListObjectsV2", "PutObject", "PutObject", "CreateMultipartUpload", "UploadPart", "UploadPart", "CompleteMultipartUpload"}
	if !slices.Equal(ops, want) {
		t.Fatalf("calls %v, want %v", ops, want)
	}
	if p := reqs[0].query.Get("prefix"); p != "costs/" {
		t.Errorf("ListObjectsV2 prefix %q", p)
	}
	for i, want := range map[int][2]string{
		1: {"*", ""}, 2: {"", `"5d41402abc4b2a76b9719d911017c592"`}, 6: {"*", ""},
	} {
		if h := reqs[i].header; h.Get("If-None-Match") != want[0] || h.Get("If-Match") != want[1] {
			t.Errorf("%s #%d: If-None-Match %q If-Match %q, want %q %q", reqs[i].op, i, h.Get("If-None-Match"), h.Get("If-Match"), want[0], want[1])
		}
	}
	for _, i := range []int{3, 4, 5} {
		if h := reqs[i].header; h.Get("If-None-Match") != "" || h.Get("If-Match") != "" {
			t.Errorf("%s carries a precondition; only PutObject and CompleteMultipartUpload take one", reqs[i].op)
		}
	}
}

// TestAccessPointRefusals: what would not reach the access point, or
// reaches it around its policy, is refused on the field that says so.
func TestAccessPointRefusals(t *testing.T) {
	const (
		alias = "cost-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias"
		arn   = "arn:aws:s3:eu-west-1:444455556666:accesspoint/cost-ap"
	)
	for _, tc := range []struct{ bucket, endpoint, more, field, want string }{
		// The host forms: the advice keeps the access point.
		{"cost-archive", "cost-ap-111122223333.s3-accesspoint.us-east-1.amazonaws.com", "", "config.endpoint",
			"an access point's own host: write the S3 endpoint, s3.us-east-1.amazonaws.com, and use the alias or the ARN as the bucket"},
		{"cost-archive", "cost-ap-111122223333.s3-accesspoint.dualstack.eu-west-1.amazonaws.com", "", "config.endpoint", "s3.eu-west-1.amazonaws.com"},
		{"cost-archive", "cost-ap-111122223333.s3-accesspoint-fips.us-east-2.amazonaws.com", "", "config.endpoint", "use the alias or the ARN"},
		{"cost-archive", "s3-accesspoint.us-east-1.amazonaws.com", "", "config.endpoint", "use the alias or the ARN"},
		{"cost-archive", "reports-123456789012.op-01234567890123456.s3-outposts.us-west-2.amazonaws.com", "", "config.endpoint", "S3 on Outposts"},
		{"cost-archive", "olap-123456789012.s3-object-lambda.us-west-2.amazonaws.com", "", "config.endpoint", "Object Lambda"},
		{"cost-archive", "mfzwi23gnjvgw.mrap.accesspoint.s3-global.amazonaws.com", "", "config.endpoint", "Multi-Region"},
		// What cannot reach an access point named as the bucket.
		{arn, "s3.amazonaws.com", "bucket_lookup_type: path", "config.bucket_lookup_type", "virtual-hosted-style requests only"},
		{alias, "s3.amazonaws.com", "bucket_lookup_type: path", "config.bucket_lookup_type", "virtual-hosted-style requests only"},
		{arn, "s3.amazonaws.com", "insecure: true", "config.insecure", "HTTPS only"},
		{arn, "minio:9000", "", "config.endpoint", "write AWS's S3 endpoint (s3.eu-west-1.amazonaws.com)"},
		{arn, "s3-fips.eu-west-1.amazonaws.com", "", "config.endpoint", "the access point's own host"},
		{arn, "s3.amazonaws.com", "region: us-east-1", "config.region", "names region us-east-1, the access point ARN eu-west-1"},
		{arn, "s3.us-east-1.amazonaws.com", "", "config.endpoint", "names region us-east-1"},
	} {
		f, err := Parse([]byte("type: S3\nconfig:\n  bucket: " + tc.bucket + "\n  endpoint: " + tc.endpoint + "\n  " + tc.more + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		errs := f.Validate()
		if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Msg, tc.want) {
			t.Errorf("%s at %s (%s): %v; want one %s error containing %q", tc.bucket, tc.endpoint, tc.more, errs, tc.field, tc.want)
		}
	}
	// An alias is a bucket name to an S3-compatible store, path-style and
	// over http included.
	f, err := Parse([]byte("type: S3\nconfig:\n  bucket: " + alias + "\n  endpoint: minio:9000\n  insecure: true\n  bucket_lookup_type: path\n"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := f.Validate(); len(errs) > 0 {
		t.Errorf("alias on minio: %v", errs)
	}
}

// TestAccessPointVariables: an ARN in S3_BUCKET_NAME is held to the
// endpoint variables and the clusters' partition, and draws no warning
// for the account and region every ARN names.
func TestAccessPointVariables(t *testing.T) {
	const arn = "arn:aws:s3:eu-west-1:444455556666:accesspoint/cost-ap"
	check := func(env map[string]string, sc Scope) []string {
		s := &Settings{S3BucketName: arn, S3PartSizeMiB: 8}
		s.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		var got []string
		checkBucket(s, sc, func(v, format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) })
		return got
	}
	aws := Scope{Partition: "aws"}
	for env, want := range map[string]string{
		"http://minio:9000":                  "AWS_ENDPOINT_URL_S3=http://minio:9000 would receive the access point's requests as <name>-<account>.minio:9000",
		"https://s3.eu-west-1.amazonaws.com": "unset it",
	} {
		if got := check(map[string]string{"AWS_ENDPOINT_URL_S3": env}, aws); len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("AWS_ENDPOINT_URL_S3=%s: %v, want %q", env, got, want)
		}
	}
	s := &Settings{S3BucketName: "cost-archive"}
	s.Load(func(k string) (string, bool) {
		return "https://cost-ap-444455556666.s3-accesspoint.eu-west-1.amazonaws.com", k == "AWS_ENDPOINT_URL_S3"
	})
	var got []string
	checkBucket(s, aws, func(v, format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) })
	if len(got) != 1 || !strings.Contains(got[0], "AWS_ENDPOINT_URL_S3=https://cost-ap-444455556666.s3-accesspoint.eu-west-1.amazonaws.com is an access point's own host") ||
		!strings.Contains(got[0], "use the alias or the ARN as the bucket") {
		t.Errorf("access point host in AWS_ENDPOINT_URL_S3: %v", got)
	}
	if got := check(map[string]string{"AWS_ENDPOINT_URL": "https://accesspoint.vpce-1a2b3c4d-5e6f.s3.eu-west-1.vpce.amazonaws.com"}, aws); len(got) > 0 {
		t.Errorf("privatelink endpoint for access points refused: %v", got)
	}
	if got := check(nil, Scope{Partition: "aws-cn"}); len(got) != 1 || !strings.Contains(got[0], `partition "aws" differs from the cluster's "aws-cn"`) {
		t.Errorf("partition: %v", got)
	}
	s = &Settings{S3BucketName: arn}
	if w := s.Warnings(); len(w) > 0 {
		t.Errorf("warnings for an ARN: %v", w)
	}
	if r := s.BucketRegion(); r != "eu-west-1" {
		t.Errorf("BucketRegion %q, want the ARN's", r)
	}
	// The report gives no region of its own: the ARN's is the default.
	if r := s.awsInput(Env{}).Region; r != "eu-west-1" {
		t.Errorf("AWS region without one given: %q, want the ARN's", r)
	}
}
