package config

import (
	"io"
	"strings"
	"testing"
)

// TestCURLocation: -cur (CUR_EXPORT_LOCATION) names the bill as an S3
// location or a directory, held to the archive's rules for a bucket name
// and a prefix; a bad value is one error naming the flag or variable as
// the user set it.
func TestCURLocation(t *testing.T) {
	t.Parallel()
	bad := []struct {
		args        []string
		env         map[string]string
		name, value string
		want        string
	}{
		{[]string{"-cur", "s3://Bad_Bucket/cur/"}, nil, "-cur", "s3://Bad_Bucket/cur/", "accepted: 3-63 lowercase letters"},
		{[]string{"-cur", "s3:///cur/"}, nil, "-cur", "s3:///cur/", "accepted: s3://bucket/prefix/ or a local directory"},
		{[]string{"-cur", "s3://cid-data-exports/a//b/", "-region", "us-east-1"}, nil, "-cur", "s3://cid-data-exports/a//b/", "accepted: a key prefix"},
		{nil, map[string]string{"CUR_EXPORT_LOCATION": "s3://cid-data-exports/cur2/"}, "CUR_EXPORT_REGION", "", "required with an S3 location"},
		{[]string{"-cur", "s3://cid-data-exports/cur2/", "-cur-region", "useast1"}, nil, "-cur-region", "useast1", regionAccepted},
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
	good := []struct {
		args                []string
		env                 map[string]string
		bucket, prefix, dir string
		region              string
	}{
		{[]string{"-cur", "s3://cid-data-exports/cur2/", "-region", "eu-west-1"}, nil, "cid-data-exports", "cur2/", "", "eu-west-1"},
		{[]string{"-cur", "s3://cid-data-exports/a/b", "-cur-region", "us-east-1"}, nil, "cid-data-exports", "a/b/", "", "us-east-1"},
		{[]string{"-cur", "s3://cid-data-exports"}, map[string]string{"CUR_EXPORT_REGION": "us-east-1"}, "cid-data-exports", "", "", "us-east-1"},
		{nil, map[string]string{"CUR_EXPORT_LOCATION": "exports/cur"}, "", "", "exports/cur", ""},
		// The flag wins over the variable.
		{[]string{"-cur", "mine"}, map[string]string{"CUR_EXPORT_LOCATION": "s3://cid-data-exports/x/"}, "", "", "mine", ""},
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
		if r.CUR == nil || r.CUR.S3BucketName != tc.bucket || r.CUR.S3Prefix != tc.prefix || r.CUR.OutputDir != tc.dir ||
			(tc.region != "" && r.CURRegion != tc.region && r.Region != tc.region) {
			t.Errorf("%v %v: %+v, want bucket %q prefix %q dir %q region %q", tc.args, tc.env, r.CUR, tc.bucket, tc.prefix, tc.dir, tc.region)
		}
		if r.OutputDir != "archive" {
			t.Errorf("%v: the archive became %q", tc.args, r.OutputDir)
		}
	}
	r, err := LoadReport(nil, func(k string) (string, bool) { return map[string]string{"OUTPUT_DIR": "archive"}[k], k == "OUTPUT_DIR" }, io.Discard)
	if err != nil || r.CUR != nil {
		t.Errorf("without -cur: CUR %+v, err %v; want no bill", r, err)
	}
	var help strings.Builder
	if _, err := LoadReport([]string{"-h"}, func(string) (string, bool) { return "", false }, &help); !IsHelp(err) ||
		!strings.Contains(help.String(), "-cur ") || !strings.Contains(help.String(), "$CUR_EXPORT_LOCATION") {
		t.Errorf("report -h does not list -cur and CUR_EXPORT_LOCATION:\n%s", help.String())
	}
}
