package exporter

import (
	"strings"
	"testing"
)

// TestBucketNameAccessPoints: a bucket name, an access point alias and an
// access point ARN are accepted as the bucket, each as AWS writes it
// (access-points-naming.html, access-points-alias.html); what only looks
// like one is refused, saying what is wrong.
func TestBucketNameAccessPoints(t *testing.T) {
	for _, ok := range []string{
		"cost-archive",
		"my-access-point-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias", // AWS's example alias
		"arn:aws:s3:us-west-2:123456789012:accesspoint/test",         // AWS's example ARN
		"arn:aws-cn:s3:cn-north-1:123456789012:accesspoint/costs",
		"arn:aws-us-gov:s3:us-gov-west-1:123456789012:accesspoint/a-b-c",
	} {
		if msg := BucketNameProblem(ok); msg != "" {
			t.Errorf("%s refused: %s", ok, msg)
		}
	}
	for name, want := range map[string]string{
		"Cost_Archive":        "or an access point alias (<name>-<metadata>-s3alias)",
		"costs-s3alias":       "<access point name>-<metadata>-s3alias",
		"Cost-ap-abc-s3alias": "<access point name>-<metadata>-s3alias",
		"cost-ap-" + strings.Repeat("a", 50) + "-s3alias":                                             "at most 63",
		"my-ap-abc123-ext-s3alias":                                                                    "Amazon FSx",
		"my-access-po-o01ac5d28a6a232904e8xz5w8ijx1qzlbp3i3kuse10--op-s3":                             "S3 on Outposts",
		"arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01ac5d28a6a232904/accesspoint/reports": "S3 on Outposts",
		"arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/olap":                            "Object Lambda",
		"arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap":                                     "Multi-Region",
		"arn:aws:s3:::cost-archive":                                                                   "access point ARN only",
		"arn:aws:iam::123456789012:role/x":                                                            "access point ARN only",
		"arn:aws:s3:us-west-2:123456789012:accesspoint:test":                                          "access point ARN only",
		"arn:aws:s3:us-west-2:123456789012:accesspoint/test/object/key":                               "access point name",
		"arn:aws:s3:us-west-2:123456789012:accesspoint/Test":                                          "access point name",
		"arn:aws:s3:us-west-2:123456789012:accesspoint/-test":                                         "access point name",
		"arn:aws:s3:us-west-2:1234:accesspoint/test":                                                  "12-digit account",
		"arn:aws:s3:uswest2:123456789012:accesspoint/test":                                            "not a region",
		"arn:azure:s3:us-west-2:123456789012:accesspoint/test":                                        "unknown partition",
		"arn:aws:s3": "not an ARN",
	} {
		if msg := BucketNameProblem(name); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want it to contain %q", name, msg, want)
		}
	}
}
