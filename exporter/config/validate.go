package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Partitions the exporter accepts in ARNs.
const partitionRE = `(?:aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc)`

// RegionRE matches AWS region codes, including GovCloud (us-gov-west-1),
// China (cn-northwest-1), the ISO regions and the European Sovereign Cloud.
const RegionRE = `(?:[a-z]{2}(?:-gov|-iso[bef]?)?-[a-z]+|eusc-[a-z]{2}-[a-z]+)-\d{1,2}`

var (
	clusterARNRE = regexp.MustCompile(`^arn:(` + partitionRE + `):eks:(` + RegionRE + `):(\d{12}):cluster/([a-zA-Z0-9][a-zA-Z0-9_-]{0,99})$`)
	roleARNRE    = regexp.MustCompile(`^arn:(` + partitionRE + `):iam::(\d{12}):role/(?:[\x21-\x7e]{0,510}/)?[\w+=,.@-]{1,64}$`)
	regionRE     = regexp.MustCompile(`^` + RegionRE + `$`)
	// A secret is named, or, for one in another account, given by ARN.
	secretNameRE = regexp.MustCompile(`^(?:[a-zA-Z0-9/_+=.@-]{1,512}|arn:` + partitionRE + `:secretsmanager:` + RegionRE + `:\d{12}:secret:[a-zA-Z0-9/_+=.@-]{1,512})$`)
	accountRE    = regexp.MustCompile(`^\d{12}$`)
	bucketRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	labelNameRE  = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	dnsLabelRE   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	snipeAcctRE  = regexp.MustCompile(`\d{12}`)
	// Only real-looking region codes trigger the warning: "cost-data-1"
	// must not read as a region.
	snipeRegionRE = regexp.MustCompile(`(?:^|[^a-z])(?:[a-z]{2}(?:-gov|-iso[bef]?)?|eusc-[a-z]{2})-(?:central|(?:north|south)?(?:east|west)?)-\d`)
)

// Enumerations, shared with --help, the chart schema and the docs.
var (
	Aggregations = []string{"container", "pod", "namespace", "controller", "controllerKind", "node", "cluster"}
	Granularites = []string{"daily", "hourly"}
	Flavors      = map[string]string{"kubecost": "/model/allocation", "cost-model": "/allocation", "opencost": "/allocation/compute"}
	Codecs       = []string{"snappy", "zstd", "gzip"}
	SSEModes     = []string{"AES256", "aws:kms"}
	LogLevels    = []string{"debug", "info", "warn", "error"}
	LogFormats   = []string{"auto", "json", "text"}
)

// Validate checks every variable and returns one error per invalid
// variable. It has no side effects, so it is safe to call at any time.
func (c *Config) Validate() Errors {
	var errs Errors
	bad := func(name, value, format string, args ...any) {
		errs = append(errs, &FieldError{Field: name, Value: value, Msg: fmt.Sprintf(format, args...)})
	}
	oneOf := func(name, value string, allowed []string) {
		for _, a := range allowed {
			if value == a {
				return
			}
		}
		bad(name, value, "accepted: %s", strings.Join(allowed, ", "))
	}

	if c.OutputDir == "" && c.S3BucketName == "" {
		bad("S3_BUCKET_NAME", "", "required unless OUTPUT_DIR is set")
	}
	if c.S3BucketName != "" {
		if msg := BucketNameProblem(c.S3BucketName); msg != "" {
			bad("S3_BUCKET_NAME", c.S3BucketName, "%s", msg)
		}
	}
	if p := c.S3Prefix; p != "" && (!strings.HasSuffix(p, "/") || strings.HasPrefix(p, "/") || strings.Contains(p, "//") || strings.ContainsAny(p, "\\\x00\n\r")) {
		bad("S3_PREFIX", p, "accepted: a key prefix like team-a/costs/ that ends with / and does not start with /")
	}
	if c.ClusterID == "" {
		bad("CLUSTER_ID", "", "required: the EKS cluster ARN, arn:<partition>:eks:<region>:<account>:cluster/<name>")
	} else if !clusterARNRE.MatchString(c.ClusterID) {
		bad("CLUSTER_ID", c.ClusterID, "accepted: an EKS cluster ARN, arn:<partition>:eks:<region>:<12-digit account>:cluster/<name>")
	}
	if u, err := url.Parse(c.KubecostAPIEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		bad("KUBECOST_API_ENDPOINT", c.KubecostAPIEndpoint, "accepted: http://<host>[:port][/path] or https://<host>[:port][/path]")
	}
	if _, ok := Flavors[c.KubecostAPIFlavor]; !ok {
		bad("KUBECOST_API_FLAVOR", c.KubecostAPIFlavor, "accepted: kubecost, cost-model, opencost")
	}
	if p := c.KubecostAPIPath; p != "" && (!strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#")) {
		bad("KUBECOST_API_PATH", p, "accepted: a path starting with /, such as /model/allocation")
	}
	if c.BackfillPeriodDays < 3 || c.BackfillPeriodDays > 3650 {
		bad("BACKFILL_PERIOD_DAYS", fmt.Sprint(c.BackfillPeriodDays), "accepted: an integer from 3 to 3650")
	}
	oneOf("AGGREGATION", c.Aggregation, Aggregations)
	oneOf("GRANULARITY", c.Granularity, Granularites)
	if c.Retries < 0 || c.Retries > 20 {
		bad("KUBECOST_MAX_RETRIES", fmt.Sprint(c.Retries), "accepted: an integer from 0 to 20")
	}
	if c.ConnectionTimeout <= 0 {
		bad("CONNECTION_TIMEOUT", fmt.Sprint(time.Duration(c.ConnectionTimeout).Seconds()), "accepted: a number of seconds > 0")
	}
	if c.ReadTimeout <= 0 {
		bad("KUBECOST_ALLOCATION_API_READ_TIMEOUT", fmt.Sprint(time.Duration(c.ReadTimeout).Seconds()), "accepted: a number of seconds > 0")
	}
	if c.S3PartSizeMiB < 5 || c.S3PartSizeMiB > 5120 {
		bad("S3_PART_SIZE_MIB", fmt.Sprint(c.S3PartSizeMiB), "accepted: an integer from 5 to 5120")
	}
	if c.S3RequestTimeout <= 0 {
		bad("S3_REQUEST_TIMEOUT", fmt.Sprint(time.Duration(c.S3RequestTimeout).Seconds()), "accepted: a number of seconds > 0")
	}
	if c.CASecretName != "" && !secretNameRE.MatchString(c.CASecretName) {
		bad("KUBECOST_CA_CERTIFICATE_SECRET_NAME", c.CASecretName, "accepted: a secret name (1-512 of a-z A-Z 0-9 / _ + = . @ -) or a Secrets Manager secret ARN")
	}
	if c.CASecretRegion != "" && !regionRE.MatchString(c.CASecretRegion) {
		bad("KUBECOST_CA_CERTIFICATE_SECRET_REGION", c.CASecretRegion, "accepted: an AWS region code such as us-east-1, us-gov-west-1 or cn-north-1")
	}
	if c.BearerSecret != "" && !secretNameRE.MatchString(c.BearerSecret) {
		bad("KUBECOST_BEARER_TOKEN_SECRET_NAME", c.BearerSecret, "accepted: a secret name (1-512 of a-z A-Z 0-9 / _ + = . @ -) or a Secrets Manager secret ARN")
	}
	if c.BearerSecret != "" && c.BearerFile != "" {
		bad("KUBECOST_BEARER_TOKEN_FILE", c.BearerFile, "set KUBECOST_BEARER_TOKEN_FILE or KUBECOST_BEARER_TOKEN_SECRET_NAME, not both")
	}
	if r := c.IRSAParentRoleARN; r != "" {
		if m := roleARNRE.FindStringSubmatch(r); m == nil {
			bad("IRSA_PARENT_IAM_ROLE_ARN", r, "accepted: an IAM role ARN, arn:<partition>:iam::<12-digit account>:role/[path/]<name>")
		} else if cm := clusterARNRE.FindStringSubmatch(c.ClusterID); cm != nil && cm[1] != m[1] {
			bad("IRSA_PARENT_IAM_ROLE_ARN", r, "the role's partition %q differs from the cluster's %q; roles cannot be assumed across partitions", m[1], cm[1])
		}
	}
	if o := c.ExpectedBucketOwner; o != "" && o != "disabled" && !accountRE.MatchString(o) {
		bad("S3_EXPECTED_BUCKET_OWNER", o, "accepted: a 12-digit account ID, or disabled")
	}
	if c.SSE != "" {
		oneOf("S3_SSE", c.SSE, SSEModes)
	}
	if c.SSEKMSKeyID != "" && c.SSE != "aws:kms" {
		bad("S3_SSE_KMS_KEY_ID", c.SSEKMSKeyID, "only valid with S3_SSE=aws:kms")
	}
	for _, kv := range []struct{ name, value string }{{"LABELS", c.Labels}, {"ANNOTATIONS", c.Annotations}} {
		seen := map[string]bool{}
		for _, k := range SplitList(kv.value) {
			if msg := KeyProblem(k); msg != "" {
				bad(kv.name, kv.value, "%q %s", k, msg)
				break
			}
			if seen[k] {
				bad(kv.name, kv.value, "%q is listed twice", k)
				break
			}
			seen[k] = true
		}
	}
	oneOf("COMPRESSION", c.Compression, Codecs)
	if c.Concurrency < 1 || c.Concurrency > 8 {
		bad("CONCURRENCY", fmt.Sprint(c.Concurrency), "accepted: an integer from 1 to 8")
	}
	for _, d := range SplitList(c.ForceDates) {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			bad("FORCE_DATES", c.ForceDates, "%q is not a YYYY-MM-DD date", d)
			break
		}
	}
	oneOf("LOG_LEVEL", c.LogLevel, LogLevels)
	oneOf("LOG_FORMAT", c.LogFormat, LogFormats)
	return errs
}

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

// KeyProblem returns why k is not a valid Kubernetes label or annotation
// key ([prefix/]name), or "" when it is.
func KeyProblem(k string) string {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name, prefix = prefix, ""
	}
	if !labelNameRE.MatchString(name) {
		return "is not a valid key: the name part must be 1-63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric"
	}
	if hasPrefix {
		if len(prefix) > 253 || prefix == "" {
			return "is not a valid key: the prefix must be a DNS subdomain of at most 253 characters"
		}
		for _, part := range strings.Split(prefix, ".") {
			if !dnsLabelRE.MatchString(part) {
				return "is not a valid key: the prefix must be a lowercase DNS subdomain"
			}
		}
	}
	return ""
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty items ("app, team," is two keys).
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Warnings are problems worth logging that do not stop the run.
func (c *Config) Warnings() []string {
	var w []string
	if b := c.S3BucketName; b != "" && (snipeAcctRE.MatchString(b) || snipeRegionRE.MatchString(b)) {
		w = append(w, fmt.Sprintf("S3_BUCKET_NAME %q contains an account ID or a region code: predictable bucket names invite bucket sniping; prefer a name without them", b))
	}
	if !bool(c.TLSVerify) && strings.HasPrefix(c.KubecostAPIEndpoint, "https://") {
		w = append(w, "TLS_VERIFY is off: Kubecost's certificate is not checked")
	}
	if bool(c.Paginate) && c.Granularity == "daily" {
		w = append(w, "KUBECOST_ALLOCATION_API_PAGINATE only applies to GRANULARITY=hourly; ignored")
	}
	return w
}
