package destination

import (
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// check runs the destination's rules over s as config does and returns
// the problems as "VAR: message".
func check(s *Settings, sc Scope) []string {
	var out []string
	for _, r := range Rules() {
		r.Check(s, sc, func(_, format string, args ...any) {
			out = append(out, r.Var+": "+strings.TrimSpace(strings.SplitN(format, "%", 2)[0]))
		})
	}
	return out
}

// TestRulesAtConfiguration: each rule of the destination's settings is
// here once, checked before anything is opened (config turns a problem
// into exit 2); s3store, which used to repeat the bucket, owner, SSE,
// KMS key, part size and metadata rules, now trusts what Open gives it.
// The file's own rules (config.part_size, put_user_metadata) are in
// TestRefused.
func TestRulesAtConfiguration(t *testing.T) {
	ok := func() *Settings {
		return &Settings{S3BucketName: "cost-data", S3PartSizeMiB: 8, Region: "us-east-1", RequestTimeout: exporter.Seconds(time.Minute)}
	}
	if p := check(ok(), Scope{}); len(p) != 0 {
		t.Fatalf("valid settings refused: %v", p)
	}
	for _, tc := range []struct {
		name string
		set  func(s *Settings)
		want string
	}{
		{"bucket upper case", func(s *Settings) { s.S3BucketName = "Cost_Data" }, "S3_BUCKET_NAME"},
		{"bucket with a slash", func(s *Settings) { s.S3BucketName = "b/x" }, "S3_BUCKET_NAME"},
		{"no destination", func(s *Settings) { s.S3BucketName = "" }, "S3_BUCKET_NAME: required"},
		{"owner not an account", func(s *Settings) { s.ExpectedBucketOwner = "12345" }, "S3_EXPECTED_BUCKET_OWNER"},
		{"sse lower case", func(s *Settings) { s.SSE = "aes256" }, "S3_SSE"},
		{"kms key without aws:kms", func(s *Settings) { s.SSE, s.SSEKMSKeyID = "AES256", "k" }, "S3_SSE_KMS_KEY_ID"},
		{"part below 5 MiB", func(s *Settings) { s.S3PartSizeMiB = 4 }, "S3_PART_SIZE_MIB"},
		{"part above 5 GiB", func(s *Settings) { s.S3PartSizeMiB = 5121 }, "S3_PART_SIZE_MIB"},
		{"region not a code", func(s *Settings) { s.Region = "useast1" }, "AWS_REGION"},
		{"no region for a bucket", func(s *Settings) { s.Region = "" }, "AWS_REGION: required"},
	} {
		s := ok()
		tc.set(s)
		if p := check(s, Scope{}); len(p) != 1 || !strings.HasPrefix(p[0], tc.want) {
			t.Errorf("%s: %v, want one %s problem", tc.name, p, tc.want)
		}
	}
}

// TestRegionDefault: each client's region is decided here, once, in the
// order docs/deployment.md states: a set Region (a flag, AWS_REGION)
// wins over AWS_DEFAULT_REGION (Load), which wins over the command's
// cluster's, which wins over the bucket's own; the bucket's own (an
// access point ARN's) wins for the S3 client alone; the secret's region
// setting wins for Secrets Manager. A command that checks its clusters
// reports a missing region there. Nothing overwrites what the user set.
func TestRegionDefault(t *testing.T) {
	s := &Settings{S3BucketName: "b-1", Region: "eu-west-1", S3PartSizeMiB: 8, RequestTimeout: 1}
	check(s, Scope{Region: "us-east-1"})
	if s.STSRegion() != "eu-west-1" || s.BucketRegion() != "eu-west-1" || s.SecretsRegion("") != "eu-west-1" {
		t.Errorf("set region replaced by the cluster's: %s, bucket %s", s.STSRegion(), s.BucketRegion())
	}
	if s.SecretsRegion("ca-central-1") != "ca-central-1" {
		t.Errorf("the secret's region setting lost: %s", s.SecretsRegion("ca-central-1"))
	}
	s.Region = ""
	check(s, Scope{Region: "us-east-1"})
	if s.Region != "" || s.STSRegion() != "us-east-1" || s.BucketRegion() != "us-east-1" {
		t.Errorf("default: %q %s, bucket %s; want the cluster's, Region untouched", s.Region, s.STSRegion(), s.BucketRegion())
	}
	ap := &Settings{S3BucketName: "arn:aws:s3:eu-north-1:444455556666:accesspoint/cost-ap", S3PartSizeMiB: 8, RequestTimeout: 1}
	check(ap, Scope{Region: "us-east-1"})
	if ap.STSRegion() != "us-east-1" || ap.BucketRegion() != "eu-north-1" {
		t.Errorf("access point: STS %s, bucket %s; want the cluster's and the ARN's", ap.STSRegion(), ap.BucketRegion())
	}
	if p := check(&Settings{S3BucketName: "b-1", S3PartSizeMiB: 8, RequestTimeout: 1}, Scope{Clusters: true}); len(p) != 0 {
		t.Errorf("a missing cluster's region reported by the destination too: %v", p)
	}
	env := map[string]string{"AWS_DEFAULT_REGION": "ap-south-1"}
	s = &Settings{S3BucketName: "b-1", S3PartSizeMiB: 8, RequestTimeout: 1}
	s.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	check(s, Scope{Region: "us-east-1"})
	if s.STSRegion() != "ap-south-1" {
		t.Errorf("AWS_DEFAULT_REGION not read, or lost to the cluster's: %q", s.STSRegion())
	}
	s.Region = "eu-west-1"
	if s.STSRegion() != "eu-west-1" {
		t.Errorf("AWS_DEFAULT_REGION won over a set region: %q", s.STSRegion())
	}
	env["AWS_REGION"] = "sa-east-1"
	s.Region = ""
	s.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if s.STSRegion() != "sa-east-1" {
		t.Errorf("AWS_DEFAULT_REGION won over AWS_REGION: %q", s.STSRegion())
	}
}
