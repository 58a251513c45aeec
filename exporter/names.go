package exporter

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

// The one copy of the AWS name rules (config, S3 store, CLI and metrics check them).

// PartitionPattern matches the AWS partitions the exporter accepts in ARNs.
const PartitionPattern = `(?:aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc)`

// RegionPattern matches AWS region codes, also GovCloud (us-gov-west-1), China
// (cn-northwest-1), the ISO regions and the European Sovereign Cloud.
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

// ParseClusterARN is the one grammar of EKS cluster ARNs (CLUSTER_ID, CLUSTER_ARNS, the
// cluster map file, the summary and metrics). When !ok only ARN is set.
func ParseClusterARN(arn string) (c ClusterARN, ok bool) {
	m := clusterARNRE.FindStringSubmatch(arn)
	if m == nil {
		return ClusterARN{ARN: arn}, false
	}
	return ClusterARN{ARN: arn, Partition: m[1], Region: m[2], Account: m[3], Name: m[4]}, true
}

// IsAccountID reports whether s is a 12-digit AWS account ID.
func IsAccountID(s string) bool { return accountRE.MatchString(s) }

// BucketNameProblem returns why name cannot be the archive's bucket, or "": a bucket name,
// an access point alias (S3 takes it wherever a bucket name goes) or an access point ARN
// (the AWS SDK sends to the access point's own host).
func BucketNameProblem(name string) string {
	switch {
	case strings.HasPrefix(name, "arn:"):
		_, msg := ParseAccessPointARN(name)
		return msg
	case strings.HasSuffix(name, "-s3alias"):
		return aliasProblem(name)
	case !bucketRE.MatchString(name):
		return "accepted: 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit; " +
			"or an access point alias (<name>-<metadata>-s3alias) or ARN (" + AccessPointARNAccepted + ")"
	case strings.Contains(name, ".."):
		return "must not contain two adjacent dots"
	case net.ParseIP(name) != nil:
		return "must not be formatted as an IP address"
	case strings.HasSuffix(name, "--op-s3"):
		return OutpostsRefused
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return fmt.Sprintf("must not start with %q (reserved by AWS)", p)
		}
	}
	for _, s := range []string{"--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return fmt.Sprintf("must not end with %q (reserved by AWS)", s)
		}
	}
	return ""
}

// Access point names, aliases and ARNs, as AWS names them
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-points-naming.html,
// access-points-restrictions-limitations-naming-rules.html; the alias is "a valid S3
// bucket name", access-points-alias.html).
var (
	accessPointNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,48}[a-z0-9]$`)
	aliasRE           = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*-[a-z0-9]+-s3alias$`)
	arnRE             = regexp.MustCompile(`^arn:([^:]*):([^:]*):([^:]*):([^:]*):(.*)$`)
	partitionRE       = regexp.MustCompile(`^` + PartitionPattern + `$`)
	regionRE          = regexp.MustCompile(`^` + RegionPattern + `$`)
)

// IsRegion reports an AWS region code (RegionPattern), the check of every region setting.
func IsRegion(s string) bool { return regionRE.MatchString(s) }

// RegionAccepted is what a region setting accepts, in the words of errors.
const RegionAccepted = "an AWS region code such as us-east-1, us-gov-west-1 or cn-north-1"

// AccessPointARNAccepted says what ParseAccessPointARN accepts.
const AccessPointARNAccepted = "arn:<partition>:s3:<region>:<12-digit account>:accesspoint/<name>"

// OutpostsRefused says why S3 on Outposts is refused in every form (ARN, alias, host):
// concurrent runs rely on conditional writes, which AWS documents for general purpose and
// directory buckets only
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html).
const OutpostsRefused = "S3 on Outposts is not supported: the exporter's writes are conditional (If-None-Match, If-Match), " +
	"which AWS documents for S3 general purpose buckets and not for S3 on Outposts"

// AccessPointARN is what an access point ARN says.
type AccessPointARN struct {
	Partition, Region, Account, Name string
}

// ParseAccessPointARN reads an access point ARN, the one ARN the exporter takes as its
// bucket; msg says why arn is not one, or "". Object Lambda, Multi-Region and Outposts
// access points are refused by name.
func ParseAccessPointARN(arn string) (ap AccessPointARN, msg string) {
	m := arnRE.FindStringSubmatch(arn)
	if m == nil {
		return ap, "not an ARN; accepted: " + AccessPointARNAccepted
	}
	ap = AccessPointARN{Partition: m[1], Region: m[3], Account: m[4]}
	service, resource := m[2], m[5]
	switch {
	case service == "s3-outposts":
		return ap, OutpostsRefused
	case service == "s3-object-lambda":
		return ap, "an Object Lambda access point serves reads only and rewrites what it returns; use the ARN or alias of the access point behind it"
	case service == "s3" && ap.Region == "" && strings.HasSuffix(resource, ".mrap"):
		return ap, "a Multi-Region Access Point is not supported: it routes each write to one of several buckets, " +
			"so the conditional writes that keep concurrent runs from overwriting each other hold per bucket, not for the archive"
	case service != "s3" || !strings.HasPrefix(resource, "accesspoint/"):
		return ap, "the bucket may be an access point ARN only; accepted: " + AccessPointARNAccepted
	case !partitionRE.MatchString(ap.Partition):
		return ap, fmt.Sprintf("unknown partition %q; accepted: %s", ap.Partition, AccessPointARNAccepted)
	case !regionRE.MatchString(ap.Region):
		return ap, fmt.Sprintf("%q is not a region; accepted: %s", ap.Region, AccessPointARNAccepted)
	case !accountRE.MatchString(ap.Account):
		return ap, fmt.Sprintf("%q is not a 12-digit account; accepted: %s", ap.Account, AccessPointARNAccepted)
	}
	ap.Name = strings.TrimPrefix(resource, "accesspoint/")
	if !accessPointNameRE.MatchString(ap.Name) || strings.HasSuffix(ap.Name, "-s3alias") {
		return ap, fmt.Sprintf("access point name %q: accepted: 3-50 lowercase letters, digits and hyphens, starting and ending with a letter or digit", ap.Name)
	}
	return ap, ""
}

// IsAccessPoint reports whether bucket is an access point alias or ARN.
func IsAccessPoint(bucket string) bool {
	_, msg := ParseAccessPointARN(bucket)
	return msg == "" || (strings.HasSuffix(bucket, "-s3alias") && aliasProblem(bucket) == "")
}

// aliasProblem checks an access point alias, <name prefix>-<metadata>-s3alias.
func aliasProblem(name string) string {
	switch {
	case strings.HasSuffix(name, "-ext-s3alias"):
		// access-points-restrictions-limitations-naming-rules.html.
		return "an alias ending in -ext-s3alias is an access point of an Amazon FSx volume, not of an S3 bucket; " +
			"the exporter's conditional writes are documented for S3 buckets only"
	case len(name) > 63 || !aliasRE.MatchString(name):
		return "an access point alias is <access point name>-<metadata>-s3alias, at most 63 lowercase letters, digits and hyphens, " +
			"as S3 gives it (aws s3control get-access-point, field Alias)"
	}
	return ""
}
