package destination

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/awsauth"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/s3rec"
)

// apSettings are settings whose bucket comes from S3_BUCKET_NAME (file
// "") or from an object-store file's config.bucket, loaded and checked as
// a run checks them: every rule must pass.
func apSettings(t *testing.T, bucket, file string) *Settings {
	t.Helper()
	s := &Settings{S3BucketName: bucket, S3PartSizeMiB: 5, RequestTimeout: exporter.Seconds(time.Minute)}
	if file != "" {
		s.S3BucketName = ""
		s.ObjectStoreConfigFile = filepath.Join(t.TempDir(), "object-store.yaml")
		if err := os.WriteFile(s.ObjectStoreConfigFile, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.Load(func(string) (string, bool) { return "", false })
	for _, r := range Rules() {
		r.Check(s, Scope{Partition: "aws", Region: "us-east-2", Accounts: []string{"111122223333"}}, func(v, format string, args ...any) {
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
	for _, tc := range s3rec.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			var rec s3rec.Recorder
			client := rec.NewClient()
			defer client.Close()
			s := apSettings(t, tc.Bucket, tc.File)
			// The run's configuration: the cluster's region, which is
			// neither the alias's bucket's (a file names that) nor the
			// ARN's.
			id := &awsauth.Identity{Config: aws.Config{
				Region: "us-east-2", HTTPClient: client, RetryMaxAttempts: 1,
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
			s3rec.Exercise(t, store)
			s3rec.Check(t, rec.Take(), tc.WantHost, tc.WantRegion)
		})
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
