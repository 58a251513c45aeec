package terraform_test

import (
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// TestBucketModuleCalls evaluates each call of modules/internal/bucket
// with its caller's inputs: every bucket blocks public access, enforces
// bucket-owner ownership, is encrypted as the caller asks and aborts
// incomplete uploads after a day; the Athena results expire under their
// prefix, and nothing else expires.
func TestBucketModuleCalls(t *testing.T) {
	const key = "arn:aws:kms:eu-west-1:" + pipelineAccount + ":key/k"
	pipeline := pipelineScope(t, map[string]any{"create_bucket": true, "bucket_kms_key_arn": key, "athena_results_expiration_days": 7})
	export, err := load(t, "modules/bill-export").Evaluate(tfeval.Inputs{Vars: vars(t, map[string]any{"bucket_name": "example-cur2-scad"})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		caller      *tfeval.Scope
		call, sse   string
		kms         cty.Value
		prefix      cty.Value
		expireAfter int
	}{
		{pipeline, "data_bucket", "aws:kms", cty.StringVal(key), cty.NullVal(cty.String), 0},
		{pipeline, "athena_results", "AES256", cty.NullVal(cty.String), cty.StringVal("athena-results/"), 7},
		{export, "bucket", "AES256", cty.NullVal(cty.String), cty.NullVal(cty.String), 0},
	} {
		s, err := tc.caller.Call(tc.call, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "resource", "aws_s3_bucket", "this"); n != 1 {
			t.Errorf("%s: %d buckets", tc.call, n)
		}
		pab := root(t, s, "resource", "aws_s3_bucket_public_access_block", "this")
		for _, a := range []string{"block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"} {
			if v := attr(t, pab, a); !v.IsKnown() || v.IsNull() || !v.True() {
				t.Errorf("%s: %s = %#v", tc.call, a, v)
			}
		}
		own := one(t, root(t, s, "resource", "aws_s3_bucket_ownership_controls", "this"), "rule")
		if got := str(t, attr(t, own, "object_ownership")); got != "BucketOwnerEnforced" {
			t.Errorf("%s: object_ownership %s", tc.call, got)
		}
		sse := one(t, one(t, root(t, s, "resource", "aws_s3_bucket_server_side_encryption_configuration", "this"), "rule"), "apply_server_side_encryption_by_default")
		if got := str(t, attr(t, sse, "sse_algorithm")); got != tc.sse || !attr(t, sse, "kms_master_key_id").RawEquals(tc.kms) {
			t.Errorf("%s: encryption %s %#v, want %s %#v", tc.call, got, attr(t, sse, "kms_master_key_id"), tc.sse, tc.kms)
		}
		rule := one(t, root(t, s, "resource", "aws_s3_bucket_lifecycle_configuration", "this"), "rule")
		if got := attr(t, one(t, rule, "filter"), "prefix"); !got.RawEquals(tc.prefix) {
			t.Errorf("%s: lifecycle prefix %#v, want %#v", tc.call, got, tc.prefix)
		}
		abort := one(t, rule, "abort_incomplete_multipart_upload")
		if d, _ := attr(t, abort, "days_after_initiation").AsBigFloat().Int64(); d != 1 {
			t.Errorf("%s: incomplete uploads kept %d days", tc.call, d)
		}
		exp := blocks(t, rule, "expiration")
		switch {
		case tc.expireAfter == 0 && len(exp) != 0:
			t.Errorf("%s: objects expire", tc.call)
		case tc.expireAfter > 0 && (len(exp) != 1 || !attr(t, exp[0], "days").RawEquals(cty.NumberIntVal(int64(tc.expireAfter)))):
			t.Errorf("%s: expiration %v, want %d days", tc.call, exp, tc.expireAfter)
		}
	}
}
