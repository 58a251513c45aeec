package exporter

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

// The one copy of the AWS name rules that the configuration, the S3 store,
// the command line and the metrics check.

// PartitionPattern matches the AWS partitions the exporter accepts in ARNs.
const PartitionPattern = `(?:aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc)`

// RegionPattern matches AWS region codes, including GovCloud (us-gov-west-1),
// China (cn-northwest-1), the ISO regions and the European Sovereign Cloud.
const RegionPattern = `(?:[a-z]{2}(?:-gov|-iso[bef]?)?-[a-z]+|eusc-[a-z]{2}-[a-z]+)-\d{1,2}`

var (
	accountRE    = regexp.MustCompile(`^\d{12}$`)
	bucketRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	clusterARNRE = regexp.MustCompile(`^arn:(` + PartitionPattern + `):eks:(` + RegionPattern + `):(\d{12}):cluster/([a-zA-Z0-9][a-zA-Z0-9_-]{0,99})$`)
)

// ClusterARNAccepted says what ParseClusterARN accepts, in the words of errors.
const ClusterARNAccepted = "an EKS cluster ARN, arn:<partition>:eks:<region>:<12-digit account>:cluster/<name>"

// ClusterARN is what an EKS cluster ARN says.
type ClusterARN struct {
	ARN, Partition, Region, Account, Name string
}

// ParseClusterARN is the one grammar of EKS cluster ARNs: CLUSTER_ID, the
// values of CLUSTER_ARNS and of the cluster map file, and the ARNs the
// summary and the metrics name clusters by. ok is false, and only ARN is
// set, when arn is not one.
func ParseClusterARN(arn string) (c ClusterARN, ok bool) {
	m := clusterARNRE.FindStringSubmatch(arn)
	if m == nil {
		return ClusterARN{ARN: arn}, false
	}
	return ClusterARN{ARN: arn, Partition: m[1], Region: m[2], Account: m[3], Name: m[4]}, true
}

// IsAccountID reports whether s is a 12-digit AWS account ID.
func IsAccountID(s string) bool { return accountRE.MatchString(s) }

// BucketNameProblem returns why name is not a valid general-purpose S3
// bucket name, or "" when it is.
func BucketNameProblem(name string) string {
	switch {
	case !bucketRE.MatchString(name):
		return "accepted: 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit"
	case strings.Contains(name, ".."):
		return "must not contain two adjacent dots"
	case net.ParseIP(name) != nil:
		return "must not be formatted as an IP address"
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return fmt.Sprintf("must not start with %q (reserved by AWS)", p)
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return fmt.Sprintf("must not end with %q (reserved by AWS)", s)
		}
	}
	return ""
}
