package terraform_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// awsUpper is the AWS provider upper bound every module states and was
// checked for: the v6 upgrade guide's removals and renames touch none of
// the resources and data sources the modules use, given the attribute
// rules below (docs/deployment.md, "AWS provider v6"). The lower bound is
// TestProviderFloors'.
var awsUpper = regexp.MustCompile(`^">= [0-9]+\.[0-9]+\.[0-9]+, < 7\.0\.0"$`)

// v6Breaks are uses that the v6 upgrade guide deprecates or repurposes:
// data.aws_region's name (use id, which both majors have) and an S3
// bucket's region (v6 reads it as the resource's own region argument).
var v6Breaks = []*regexp.Regexp{
	regexp.MustCompile(`data\.aws_region\.[a-z_]+\.name\b`),
	regexp.MustCompile(`aws_s3_bucket\.[a-z_]+\.region\b`),
	regexp.MustCompile(`\bs3_us_east_1_regional_endpoint\b`),
}

func TestAWSProviderRange(t *testing.T) {
	mods := moduleDirs
	constraint := regexp.MustCompile(`(?s)aws\s*=\s*\{.*?version\s*=\s*("[^"]*")`)
	for _, m := range mods {
		b, err := os.ReadFile(filepath.Join(m, "versions.tf"))
		if err != nil {
			t.Fatal(err)
		}
		if got := constraint.FindSubmatch(b); got == nil || !awsUpper.Match(got[1]) {
			t.Errorf("%s/versions.tf: aws version %q, want \">= x.y.z, < 7.0.0\"", m, got)
		}
		tfs, _ := filepath.Glob(filepath.Join(m, "*.tf"))
		for _, f := range tfs {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range v6Breaks {
				if loc := re.Find(src); loc != nil {
					t.Errorf("%s uses %s, which AWS provider v6 deprecates or repurposes", f, loc)
				}
			}
		}
	}
	// The test's own patterns catch what they are meant to, and only that.
	for i, s := range []string{"data.aws_region.current.name", "aws_s3_bucket.this.region", `s3_us_east_1_regional_endpoint = "legacy"`} {
		if !v6Breaks[i].MatchString(s) {
			t.Errorf("pattern %d does not match %q", i, s)
		}
	}
	for _, re := range v6Breaks {
		if re.MatchString("data.aws_region.current.id aws_s3_bucket.this.bucket_region") {
			t.Errorf("pattern %s matches a v6-safe use", re)
		}
	}
}
