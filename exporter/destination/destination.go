// Package destination is the archive's one way in: the settings that say where the day
// files live (an S3 bucket or a local directory), and Open, which run and report both call,
// so report reads what run writes with the same environment.
//
// The sources are the env tags (embedded in config's tables, so help, the docs and the
// chart list them), the report's flag tags, and OBJECT_STORE_CONFIG_FILE (file.go,
// objectstore.go); the bill's location is a second Settings (bill.go). Settings owns the
// defaults, validation (Rules), each client's region, Sources, and the construction of the
// store and client (open.go): credentials, role chaining, endpoint, TLS, retries,
// encryption, object headers. s3store and dirstore only implement the store.
//
// Adding an object-store option: docs/architecture.md.
package destination

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
)

// Settings are the destination's settings. A command's configuration
// struct embeds it; config decodes the tags, then calls Load.
type Settings struct {
	S3BucketName          string `env:"S3_BUCKET_NAME" flag:"bucket" req:"unless OUTPUT_DIR" desc:"the archive's bucket (required unless OUTPUT_DIR or OBJECT_STORE_CONFIG_FILE sets the destination)"`
	ObjectStoreConfigFile string `env:"OBJECT_STORE_CONFIG_FILE" flag:"object-store-config-file" desc:"Thanos-format bucket configuration, such as Kubecost's object-store.yaml or federated-store.yaml: sets bucket, prefix, endpoint, region, keys, encryption and object metadata; a variable that sets the same thing must agree with it"`
	S3Prefix              string `env:"S3_PREFIX" flag:"prefix" desc:"optional key prefix before account_id=, ending in /"`
	OutputDir             string `env:"OUTPUT_DIR" flag:"dir" desc:"the archive is this local directory, in the same key layout, instead of S3"`
	IRSAParentRoleARN     string `env:"IRSA_PARENT_IAM_ROLE_ARN" desc:"role to assume with the IRSA credentials when the bucket is in another account"`
	ExpectedBucketOwner   string `env:"S3_EXPECTED_BUCKET_OWNER" desc:"12-digit account that must own the bucket; default the parent role's account, else the cluster's; 'disabled' to omit"`
	SSE                   string `env:"S3_SSE" desc:"server-side encryption: empty (bucket default), AES256 or aws:kms"`
	SSEKMSKeyID           string `env:"S3_SSE_KMS_KEY_ID" desc:"KMS key ID or ARN, with S3_SSE=aws:kms"`
	S3PartSizeMiB         int    `env:"S3_PART_SIZE_MIB" default:"8" desc:"multipart part size in MiB, 5-5120; a day file larger than one part is uploaded in parts"`
	// The run's table leaves it out: the AWS SDK defines it, and EKS sets it in IRSA pods.
	Region string `env:"AWS_REGION" flag:"region" desc:"the region of STS and of the bucket, unless the bucket names its own (an access point ARN, OBJECT_STORE_CONFIG_FILE's config.region); default: AWS_DEFAULT_REGION, else CLUSTER_ID's"`
	// RequestTimeout bounds every AWS call of the archive (awsauth's HTTP client).
	RequestTimeout exporter.Seconds `env:"S3_REQUEST_TIMEOUT" default:"60" desc:"seconds an S3, STS or Secrets Manager call may make no progress (response headers, request or response body) before it is retried, > 0"`

	// store is what Load read from OBJECT_STORE_CONFIG_FILE, so the rules do no I/O.
	store objectStore
	// envRegion is AWS_REGION, else AWS_DEFAULT_REGION; clusterRegion is Scope.Region;
	// roleVar names IRSAParentRoleARN's variable when it is not its own (the bill's).
	envRegion, clusterRegion, roleVar string
}

// Load reads OBJECT_STORE_CONFIG_FILE and fills the values only the file sets; lookup is
// the environment the file must agree with. Call it once, after decoding.
func (s *Settings) Load(lookup func(string) (string, bool)) {
	get := func(name string) string { v, _ := lookup(name); return strings.TrimSpace(v) }
	s.envRegion = cmp.Or(get("AWS_REGION"), get("AWS_DEFAULT_REGION")) // the SDK's order
	s.loadObjectStore(lookup)
}

// STSRegion is the region of STS and of every AWS client's base configuration, in the
// order of docs/deployment.md ("Regions"): Region (the bill's: BILL_REGION), else
// AWS_REGION (or -region), else AWS_DEFAULT_REGION, else the cluster's, else the bucket's.
func (s *Settings) STSRegion() string {
	return cmp.Or(s.Region, s.envRegion, s.clusterRegion, s.ownRegion())
}

// BucketRegion is the S3 client's region: the bucket's own (an access
// point ARN's, the object-store file's), else STSRegion.
func (s *Settings) BucketRegion() string { return cmp.Or(s.ownRegion(), s.STSRegion()) }

// SecretsRegion is Secrets Manager's: setting (the secret's region variable), else STSRegion.
func (s *Settings) SecretsRegion(setting string) string { return cmp.Or(setting, s.STSRegion()) }

// ownRegion is an access point ARN's region, else the object-store file's.
func (s *Settings) ownRegion() string {
	if ap, msg := exporter.ParseAccessPointARN(s.S3BucketName); msg == "" {
		return ap.Region
	}
	if f := s.store.file; f != nil && f.IsS3() {
		return f.Region()
	}
	return ""
}

// Scope is what the rest of a command's configuration tells the rules: the clusters'
// partition and accounts (none for the report) and region. Clusters says the command
// checks its clusters, so a missing region is reported there, once.
type Scope struct {
	Partition, Region string
	Accounts          []string
	Clusters          bool
}

// Rule checks one setting of a T (Settings, Bill); bad is called once per problem, with
// the value as the user wrote it.
type Rule[T any] struct {
	Var   string
	Check func(s *T, sc Scope, bad func(value, format string, args ...any))
}

type badFunc = func(value, format string, args ...any)

// SSEModes are the accepted S3_SSE values.
func SSEModes() []string { return []string{s3store.SSES3, s3store.SSEKMS} }

const maxPartSize = 5 << 30

// partSizeProblem holds a part size in bytes to S3's limits on a multipart part:
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html
func partSizeProblem(n int64) string {
	if n < 5<<20 || n > maxPartSize {
		return "accepted: 5 MiB to 5 GiB (5120 MiB), S3's limits on a part"
	}
	return ""
}

// timeoutVar names RequestTimeout in the errors of a stalled call.
const timeoutVar = "S3_REQUEST_TIMEOUT"

var roleARNRE = regexp.MustCompile(`^arn:(` + exporter.PartitionPattern + `):iam::(\d{12}):role/(?:[\x21-\x7e]{0,510}/)?[\w+=,.@-]{1,64}$`)

const roleAccepted = "an IAM role ARN, arn:<partition>:iam::<12-digit account>:role/[path/]<name>"

// Rules are the destination's checks, in the order errors are reported.
func Rules() []Rule[Settings] {
	return []Rule[Settings]{
		{"S3_BUCKET_NAME", checkBucket},
		{"S3_PREFIX", func(s *Settings, _ Scope, bad badFunc) {
			if msg := prefixProblem(s.S3Prefix); msg != "" {
				bad(s.S3Prefix, "%s", msg)
			}
		}},
		{"OBJECT_STORE_CONFIG_FILE", func(s *Settings, _ Scope, bad badFunc) { checkObjectStore(s, bad) }},
		{"IRSA_PARENT_IAM_ROLE_ARN", checkParentRole},
		{"S3_EXPECTED_BUCKET_OWNER", checkBucketOwner},
		{"S3_SSE", func(s *Settings, _ Scope, bad badFunc) {
			if s.SSE != "" && !slices.Contains(SSEModes(), s.SSE) {
				bad(s.SSE, "accepted: %s", strings.Join(SSEModes(), ", "))
			}
		}},
		{"S3_SSE_KMS_KEY_ID", func(s *Settings, _ Scope, bad badFunc) {
			if s.SSEKMSKeyID != "" && s.SSE != s3store.SSEKMS {
				bad(s.SSEKMSKeyID, "only valid with S3_SSE=%s", s3store.SSEKMS)
			}
		}},
		{"S3_PART_SIZE_MIB", func(s *Settings, _ Scope, bad badFunc) {
			if msg := partSizeProblem(int64(s.S3PartSizeMiB) << 20); msg != "" {
				bad(fmt.Sprint(s.S3PartSizeMiB), "%s", msg)
			}
		}},
		{"AWS_REGION", checkRegion},
	}
}

// checkRegion learns the cluster's region and requires a region for a bucket.
func checkRegion(s *Settings, sc Scope, bad badFunc) {
	s.clusterRegion = sc.Region
	switch r := s.STSRegion(); {
	case r != "" && !exporter.IsRegion(r):
		bad(r, "accepted: %s", exporter.RegionAccepted)
	case r == "" && s.S3BucketName != "" && !s.IsDir() && !sc.Clusters:
		bad("", "required with a bucket: the bucket's region (or CLUSTER_ID, whose region it is)")
	}
}

// checkBucket requires a destination; an unusable file is reported by its own rule only.
func checkBucket(s *Settings, sc Scope, bad badFunc) {
	switch {
	case s.S3BucketName == "" && s.OutputDir == "" && s.ObjectStoreConfigFile == "":
		bad("", "required unless OUTPUT_DIR or OBJECT_STORE_CONFIG_FILE sets the destination")
	case s.S3BucketName == "" && s.OutputDir == "" && s.store.usable():
		bad("", "required: OBJECT_STORE_CONFIG_FILE names no bucket (config.bucket)")
	case s.S3BucketName != "":
		if msg := exporter.BucketNameProblem(s.S3BucketName); msg != "" {
			bad(s.S3BucketName, "%s", msg)
		} else {
			checkAccessPoint(s, sc, bad)
		}
	}
}

// prefixProblem is the one grammar of a key prefix (the file's goes through KeyPrefix
// first). It refuses control characters (tools that list keys expect UTF-8 without them)
// and the backslash, which Windows tools read as a separator.
func prefixProblem(p string) string {
	if p == "" || (strings.HasSuffix(p, "/") && !strings.HasPrefix(p, "/") && !strings.Contains(p, "//") &&
		!strings.ContainsFunc(p, func(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f })) {
		return ""
	}
	return "accepted: a key prefix like team-a/costs/ that ends with /, does not start with /, and has no //, backslash or control character"
}

func checkParentRole(s *Settings, sc Scope, bad badFunc) {
	r := s.IRSAParentRoleARN
	if r == "" {
		return
	}
	if m := roleARNRE.FindStringSubmatch(r); m == nil {
		bad(r, "accepted: %s", roleAccepted)
	} else if sc.Partition != "" && sc.Partition != m[1] {
		bad(r, "the role's partition %q differs from the cluster's %q; roles cannot be assumed across partitions", m[1], sc.Partition)
	}
}

// checkBucketOwner requires an owner when the default is ambiguous: clusters of a
// federated Kubecost in several accounts, and no parent role.
func checkBucketOwner(s *Settings, sc Scope, bad badFunc) {
	o := s.ExpectedBucketOwner
	switch {
	case o != "" && o != "disabled" && !exporter.IsAccountID(o):
		bad(o, "accepted: a 12-digit account ID, or disabled")
	case o == "" && s.S3BucketName != "" && s.IRSAParentRoleARN == "" && len(sc.Accounts) > 1:
		bad(o, "required when the clusters are in several accounts (%s) and IRSA_PARENT_IAM_ROLE_ARN is unset: "+
			"the 12-digit account that owns the bucket, or disabled", strings.Join(sc.Accounts, ", "))
	}
}

// BucketOwner is the ExpectedBucketOwner of every S3 call: S3_EXPECTED_BUCKET_OWNER, else
// the parent role's account (the bucket lives in the pipeline account), else home (the
// cluster's; "" for the report). "" disables the check.
func (s *Settings) BucketOwner(home string) string {
	if s.ExpectedBucketOwner == "disabled" {
		return ""
	}
	var parent string
	if m := roleARNRE.FindStringSubmatch(s.IRSAParentRoleARN); m != nil {
		parent = m[2]
	}
	return cmp.Or(s.ExpectedBucketOwner, parent, home)
}

// IsDir reports whether the archive is a local directory.
func (s *Settings) IsDir() bool { return s.OutputDir != "" }

// Name is the archive as the logs and errors name it.
func (s *Settings) Name() string {
	if s.IsDir() {
		return "dir " + s.OutputDir
	}
	return "s3://" + s.S3BucketName + "/" + s.S3Prefix
}

// Warnings are the destination's problems that are logged but do not stop a run.
func (s *Settings) Warnings() []string {
	var w []string
	// An access point's ARN names its account and region by design, and no other account
	// can take it or its alias.
	if b := s.S3BucketName; b != "" && !exporter.IsAccessPoint(b) && (acctRE.MatchString(b) || regionCodeRE.MatchString(b)) {
		w = append(w, fmt.Sprintf("S3_BUCKET_NAME %q contains an account ID or a region code: predictable bucket names invite bucket sniping; prefer a name without them", b))
	}
	return append(w, s.objectStoreWarnings()...)
}

var (
	acctRE = regexp.MustCompile(`\d{12}`)
	// Only real-looking region codes warn: "cost-data-1" is not a region.
	regionCodeRE = regexp.MustCompile(`(?:^|[^a-z])(?:[a-z]{2}(?:-gov|-iso[bef]?)?|eusc-[a-z]{2})-(?:central|(?:north|south)?(?:east|west)?)-\d`)
)
