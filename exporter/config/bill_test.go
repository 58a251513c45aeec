package config

import (
	"io"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// TestBillLocationRefused: -bill (BILL_LOCATION) names the bill as an S3
// location or a directory, loaded into destination settings of its own
// and held to the archive's rules for a bucket name, a prefix, a region
// and a role; a bad value is one error naming the flag or variable as
// the user set it. -cur and CUR_EXPORT_LOCATION (and -cur-region,
// CUR_EXPORT_REGION) are old names that still work; an old and a new
// name set to different values are an error.
func TestBillLocationRefused(t *testing.T) {
	t.Parallel()
	bad := []struct {
		args        []string
		env         map[string]string
		name, value string
		want        string
	}{
		{[]string{"-bill", "s3://Bad_Bucket/cur/", "-region", "us-east-1"}, nil, "-bill", "Bad_Bucket", "accepted: 3-63 lowercase letters"},
		{[]string{"-cur", "s3://Bad_Bucket/cur/", "-region", "us-east-1"}, nil, "BILL_LOCATION", "Bad_Bucket", "accepted: 3-63 lowercase letters"},
		{[]string{"-bill", "s3:///cur/"}, nil, "-bill", "s3:///cur/", "accepted: s3://bucket/prefix/ or a local directory"},
		{[]string{"-bill", "s3://cid-data-exports/a//b/", "-region", "us-east-1"}, nil, "-bill", "a//b/", "accepted: a key prefix"},
		{nil, map[string]string{"BILL_LOCATION": "s3://cid-data-exports/cur2/"}, "BILL_REGION", "", "required with a bucket"},
		{[]string{"-bill", "s3://cid-data-exports/cur2/", "-bill-region", "useast1"}, nil, "-bill-region", "useast1", exporter.RegionAccepted},
		{[]string{"-bill", "s3://cid-data-exports/cur2/", "-region", "us-east-1", "-bill-role-arn", "arn:aws:iam::1:role/x"}, nil,
			"-bill-role-arn", "arn:aws:iam::1:role/x", "accepted: an IAM role ARN"},
		{[]string{"-bill", "s3://cid-data-exports/a/"}, map[string]string{"CUR_EXPORT_LOCATION": "s3://cid-data-exports/b/", "AWS_REGION": "us-east-1"},
			"-bill", "s3://cid-data-exports/a/", "CUR_EXPORT_LOCATION=\"s3://cid-data-exports/b/\" is its old name"},
		{[]string{"-bill", "dir", "-bill-region", "us-east-1", "-cur-region", "eu-west-1"}, nil, "-bill-region", "us-east-1", "is its old name"},
	}
	for _, tc := range bad {
		env := map[string]string{"OUTPUT_DIR": "archive"}
		for k, v := range tc.env {
			env[k] = v
		}
		_, err := LoadReport(tc.args, func(k string) (string, bool) { s, ok := env[k]; return s, ok }, io.Discard)
		if msg := checkOneError(err, tc.name, tc.value, tc.want); msg != "" {
			t.Errorf("%v %v: %s", tc.args, tc.env, msg)
		}
	}
}

// TestBillLocationAccepted: the location's settings as loaded, the old
// names with a warning each.
func TestBillLocationAccepted(t *testing.T) {
	t.Parallel()
	good := []struct {
		args                []string
		env                 map[string]string
		bucket, prefix, dir string
		region, role        string
		warnings            int
	}{
		{[]string{"-bill", "s3://cid-data-exports/cur2/", "-region", "eu-west-1"}, nil, "cid-data-exports", "cur2/", "", "eu-west-1", "", 0},
		{[]string{"-bill", "s3://cid-data-exports/a/b", "-bill-region", "us-east-1", "-region", "eu-west-1"}, nil, "cid-data-exports", "a/b/", "", "us-east-1", "", 0},
		// The bill's region is never the archive bucket's own: the
		// environment's, then the cluster's.
		{[]string{"-bill", "s3://cid-data-exports"}, map[string]string{"AWS_DEFAULT_REGION": "ap-south-1"}, "cid-data-exports", "", "", "ap-south-1", "", 0},
		{[]string{"-bill", "s3://cid-data-exports"}, map[string]string{"CLUSTER_ID": "arn:aws:eks:sa-east-1:111111111111:cluster/c"},
			"cid-data-exports", "", "", "sa-east-1", "", 0},
		{[]string{"-bill", "s3://cid-data-exports", "-bill-role-arn", "arn:aws:iam::222222222222:role/cur-reader"}, map[string]string{"BILL_REGION": "us-east-1"},
			"cid-data-exports", "", "", "us-east-1", "arn:aws:iam::222222222222:role/cur-reader", 0},
		{nil, map[string]string{"BILL_LOCATION": "exports/cur"}, "", "", "exports/cur", "", "", 0},
		// The old names still work, with a warning each.
		{[]string{"-cur", "s3://cid-data-exports/x/", "-cur-region", "us-east-1"}, nil, "cid-data-exports", "x/", "", "us-east-1", "", 2},
		{nil, map[string]string{"CUR_EXPORT_LOCATION": "exports/cur", "BILL_LOCATION": "exports/cur"}, "", "", "exports/cur", "", "", 1},
		// A flag wins over its own variable.
		{[]string{"-bill", "mine"}, map[string]string{"BILL_LOCATION": "s3://cid-data-exports/x/"}, "", "", "mine", "", "", 0},
	}
	for _, tc := range good {
		env := map[string]string{"OUTPUT_DIR": "archive"}
		for k, v := range tc.env {
			env[k] = v
		}
		r, err := LoadReport(tc.args, func(k string) (string, bool) { s, ok := env[k]; return s, ok }, io.Discard)
		if err != nil {
			t.Errorf("%v %v: %v", tc.args, tc.env, err)
			continue
		}
		b := r.Bill.Dest
		if b == nil || b.S3BucketName != tc.bucket || b.S3Prefix != tc.prefix || b.OutputDir != tc.dir ||
			(tc.region != "" && b.BucketRegion() != tc.region) || b.IRSAParentRoleARN != tc.role {
			t.Errorf("%v %v: %+v, want bucket %q prefix %q dir %q region %q role %q", tc.args, tc.env, b, tc.bucket, tc.prefix, tc.dir, tc.region, tc.role)
		}
		if b != nil && b.RequestTimeout != r.RequestTimeout {
			t.Errorf("%v: the bill's request timeout %v is not the command's %v", tc.args, b.RequestTimeout, r.RequestTimeout)
		}
		if got := len(r.Bill.Warnings()); got != tc.warnings {
			t.Errorf("%v %v: %d warnings %q, want %d", tc.args, tc.env, got, r.Bill.Warnings(), tc.warnings)
		}
		if r.OutputDir != "archive" {
			t.Errorf("%v: the archive became %q", tc.args, r.OutputDir)
		}
	}
	r, err := LoadReport(nil, func(k string) (string, bool) { return map[string]string{"OUTPUT_DIR": "archive"}[k], k == "OUTPUT_DIR" }, io.Discard)
	if err != nil || r.Bill.Dest != nil {
		t.Errorf("without -bill: bill %+v, err %v; want no bill", r, err)
	}
}

// TestBillRegionNotBorrowed: the bill's region is never the archive
// bucket's own (here an access point's, eu-north-1): without one of its
// own, the environment's or the cluster's, it is required, not borrowed.
func TestBillRegionNotBorrowed(t *testing.T) {
	t.Parallel()
	ap := "arn:aws:s3:eu-north-1:444455556666:accesspoint/cost-ap"
	noEnv := func(string) (string, bool) { return "", false }
	_, err := LoadReport([]string{"-bucket", ap, "-bill", "s3://cid-data-exports/"}, noEnv, io.Discard)
	if msg := checkOneError(err, "BILL_REGION", "", "required with a bucket"); msg != "" {
		t.Errorf("the bill's region taken from the archive's access point: %s", msg)
	}
	r, err := LoadReport([]string{"-bucket", ap, "-bill", "s3://cid-data-exports/", "-region", "us-east-1"}, noEnv, io.Discard)
	if err != nil || r.BucketRegion() != "eu-north-1" || r.STSRegion() != "us-east-1" || r.Bill.Dest.BucketRegion() != "us-east-1" {
		t.Errorf("archive bucket %s, STS %s, bill %v (%v); want eu-north-1, us-east-1, us-east-1", r.BucketRegion(), r.STSRegion(), r.Bill.Dest, err)
	}
}

// TestBillHelp: report -h lists the new names and the old.
func TestBillHelp(t *testing.T) {
	var help strings.Builder
	if _, err := LoadReport([]string{"-h"}, func(string) (string, bool) { return "", false }, &help); !IsHelp(err) {
		t.Fatal(err)
	}
	for _, want := range []string{"-bill ", "$BILL_LOCATION", "-bill-region ", "$BILL_REGION", "-bill-role-arn ", "$BILL_ROLE_ARN", "-cur ", "$CUR_EXPORT_LOCATION"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("report -h does not list %s:\n%s", want, help.String())
		}
	}
}
