package destination

import (
	"net"
	"regexp"
	"strconv"
	"strings"
)

// config.endpoint as minio-go, objstore's S3 client, reads it. The exporter must not link
// minio-go, so these rules are restated from minio-go v7.0.93 (required by objstore
// v0.0.0-20250804093838), and internal/objstorecompat holds each to minio-go's functions:
//
//   - an endpoint: utils.go getEndpointURL and isValidEndpointURL (url.Parse of
//     scheme://endpoint, a path of "" or "/", s3utils.IsValidIP or IsValidDomain, and the
//     refusal of other *.s3.amazonaws.com and *.googleapis.com hosts);
//   - a host's region: pkg/s3utils/utils.go GetRegionFromURL (api.go privateNew);
//   - AWS's hosts: s3utils.IsAmazonEndpoint, and the FIPS and PrivateLink ones api.go
//     makeTargetURL sends to as written, replacing any other by the regional endpoint;
//   - virtual-hosted auto addressing: api.go isVirtualHostStyleRequest and
//     s3utils.IsVirtualHostSupported.
//
// The exporter's own choices (docs/object-store-config.md): hosts compare as DNS does,
// without case or final dot (minio-go's patterns are case-sensitive and take
// "s3.amazonaws.com." for a non-AWS host); and a bucket in any AWS host is refused, where
// minio-go refuses only <bucket>.s3.amazonaws.com and sends path-style to the regional
// forms, whose keys S3 would read under an extra <bucket>/.

// S3 host patterns of minio-go v7.0.93 pkg/s3utils/utils.go, character for character, so
// their quirks are ours: unescaped dots match any character, lazy groups stop first.
var (
	awsHostHyphen          = regexp.MustCompile(`^s3-(.*?).amazonaws.com$`)
	awsHostDualStack       = regexp.MustCompile(`^s3.dualstack.(.*?).amazonaws.com$`)
	awsHostFIPS            = regexp.MustCompile(`^s3-fips.(.*?).amazonaws.com$`)
	awsHostFIPSDualStack   = regexp.MustCompile(`^s3-fips.dualstack.(.*?).amazonaws.com$`)
	awsHostExpress         = regexp.MustCompile(`^s3express-[a-z0-9]{3,7}-az[1-6]\.([a-z0-9-]+)\.amazonaws\.com$`)
	awsHostExpressControl  = regexp.MustCompile(`^s3express-control\.([a-z0-9-]+)\.amazonaws\.com$`)
	awsHostDot             = regexp.MustCompile(`^s3.(.*?).amazonaws.com$`)
	awsHostChina           = regexp.MustCompile(`^s3.(cn.*?).amazonaws.com.cn$`)
	awsHostChinaDualStack  = regexp.MustCompile(`^s3.dualstack.(cn.*?).amazonaws.com.cn$`)
	awsELB                 = regexp.MustCompile(`elb(.*?).amazonaws.com$`)
	awsELBChina            = regexp.MustCompile(`elb(.*?).amazonaws.com.cn$`)
	awsHostPrivateLink     = regexp.MustCompile(`^(?:bucket|accesspoint).vpce-.*?.s3.(.*?).vpce.amazonaws.com$`)
	regionFromHostPatterns = []*regexp.Regexp{
		// GetRegionFromURL's order: else FIPS's lazy group would take "dualstack.<region>".
		awsHostFIPSDualStack, awsHostFIPS, awsHostDualStack, awsHostHyphen, awsHostChina,
		awsHostChinaDualStack, awsHostPrivateLink, awsHostExpress, awsHostExpressControl,
	}
)

// regionOfHost is s3utils.GetRegionFromURL for a canonical host (endpointHost): "" for
// s3.amazonaws.com, s3-external-1.amazonaws.com, a load balancer or a non-AWS host.
func regionOfHost(host string) string {
	if host == "s3-external-1.amazonaws.com" || awsELB.MatchString(host) || awsELBChina.MatchString(host) {
		return ""
	}
	for _, re := range regionFromHostPatterns {
		if m := re.FindStringSubmatch(host); m != nil {
			return m[1]
		}
	}
	if m := awsHostDot.FindStringSubmatch(host); m != nil {
		for _, not := range []string{"xpress-", "dualstack.", "control.", "website-"} {
			if strings.HasPrefix(m[1], not) {
				return ""
			}
		}
		return m[1]
	}
	return ""
}

// isAWSHost is s3utils.IsAmazonEndpoint.
func isAWSHost(host string) bool {
	return host == "s3.amazonaws.com" || host == "s3-external-1.amazonaws.com" || regionOfHost(host) != ""
}

// keepsAWSHost reports the AWS hosts minio-go sends to as written (FIPS, PrivateLink).
func keepsAWSHost(host string) bool {
	fips := strings.HasPrefix(host, "s3-fips") && strings.HasSuffix(host, ".amazonaws.com")
	return fips || awsHostPrivateLink.MatchString(host)
}

// virtualHostSupported is s3utils.IsVirtualHostSupported: not for a dotted bucket over TLS
// (no wildcard certificate covers it).
func virtualHostSupported(host string, secure bool, bucket string) bool {
	if secure && strings.Contains(bucket, ".") {
		return false
	}
	return isAWSHost(host) || host == "storage.googleapis.com" || strings.HasSuffix(host, "aliyuncs.com")
}

// splitEndpoint cuts host[:port] after dropping one trailing "/", which minio-go's url.Parse
// takes for an empty path; ok is false for anything else.
func splitEndpoint(e string) (host, port string, ok bool) {
	e = strings.TrimSuffix(e, "/")
	if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
		return e[1 : len(e)-1], "", true
	}
	if strings.HasPrefix(e, "[") || strings.Count(e, ":") == 1 {
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			return "", "", false
		}
		return h, p, true
	}
	return e, "", !strings.Contains(e, ":")
}

// endpointHost is a valid endpoint's host in lower case, without port or final dot.
func endpointHost(e string) string {
	h, _, _ := splitEndpoint(e)
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// hostLabelRE is one DNS label; '_' is for docker-compose services such as minio_1.
var hostLabelRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$`)

// endpointProblem accepts the hosts minio-go accepts that a resolver can look up ('_', IPv6
// in brackets, a final dot). It refuses the rest of what IsValidDomain lets through ("a..b",
// "~", non-ASCII), a bad port, and userinfo, queries and fragments minio-go ignores.
func endpointProblem(e string) string {
	switch {
	case strings.Contains(e, "://"):
		return "write host[:port] without the scheme; insecure: true selects http"
	case strings.Contains(e, "@"):
		return "write host[:port] without credentials: they go in access_key and secret_key"
	case strings.ContainsAny(strings.TrimSuffix(e, "/"), "/?#"):
		return "write host[:port] alone: the bucket goes in config.bucket and a key prefix in prefix"
	}
	host, port, ok := splitEndpoint(e)
	if !ok {
		return "not host[:port] (an IPv6 address goes in brackets: [fd00::1]:9000)"
	}
	hasPort := port != "" || strings.HasSuffix(strings.TrimSuffix(e, "/"), ":")
	if n, err := strconv.Atoi(port); hasPort && (err != nil || n < 1 || n > 65535 || port[0] == '+') {
		return "the port must be a number from 1 to 65535"
	}
	if bracketed := strings.HasPrefix(e, "["); net.ParseIP(host) == nil && (bracketed || !validHostName(host)) {
		return "not a host name or IP address: a name is labels of letters, digits, '-' and '_' joined by dots"
	}
	return awsHostProblem(endpointHost(e))
}

func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if !hostLabelRE.MatchString(l) {
			return false
		}
	}
	return true
}

// bucketInAWSHostRE finds <bucket>.<S3 host>; the greedy group leaves the
// last ".s3." or ".s3-" to the S3 host.
var bucketInAWSHostRE = regexp.MustCompile(`^(.+)\.(s3[.-].+)$`)

// awsHostProblem refuses an access point's host, a bucket in an AWS S3 host (S3 would read
// path-style keys under an extra <bucket>/), and Google hosts isValidEndpointURL refuses.
func awsHostProblem(host string) string {
	if msg := accessPointHostProblem(host); msg != "" {
		return msg
	}
	if m := bucketInAWSHostRE.FindStringSubmatch(host); m != nil && isAWSHost(m[2]) && !awsHostPrivateLink.MatchString(host) {
		return "the host names the bucket " + strconv.Quote(m[1]) + ": write the S3 endpoint alone, " + m[2] + ", and the bucket in config.bucket"
	}
	if strings.Contains(host, ".googleapis.com") && host != "storage.googleapis.com" {
		return "Google Cloud Storage's endpoint is storage.googleapis.com (the bucket goes in config.bucket)"
	}
	return ""
}

// sdkResolves reports an AWS host the AWS SDK resolves from the region (not FIPS, PrivateLink).
func sdkResolves(host string) bool { return isAWSHost(host) && !keepsAWSHost(host) }

// arnEndpointRefused reports a custom endpoint an access point ARN cannot use: the SDK sends
// to <name>-<account>.<host>, which only a PrivateLink endpoint for access points reads.
func arnEndpointRefused(host string) bool {
	return host != "" && !sdkResolves(host) && !accessPointVPCE(host) && accessPointHostProblem(host) == ""
}
