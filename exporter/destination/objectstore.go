package destination

import (
	"crypto/tls"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// OBJECT_STORE_CONFIG_FILE is a Thanos-format file, Kubecost's object-store.yaml for its
// ETL backup and federated storage. The file and the variables may each set a value; where
// both do they must agree, or the run stops with exit 2 naming both: no precedence.

// maxObjectStoreFile bounds the file: a real one is a few hundred bytes.
const maxObjectStoreFile = 1 << 20

// objectStore is what Load read from the file.
type objectStore struct {
	file *File
	err  error // the file could not be read or parsed
	tls  *tls.Config
	// env holds the variables of pairs() that were set (not blank).
	env map[string]string
}

// pair is one thing both the file and a variable can set.
type pair struct {
	setting string   // the name in Settings
	vars    []string // the variables, the first set one counts
	path    string   // the file's key
	// norm makes a value of the variable (env true) or of the file comparable.
	file   func(f *File) (string, bool)
	norm   func(v string, env bool) string
	secret bool
	// apply fills the field when only the file sets it; nil when the value reaches its
	// user another way (AWSLookup, accessors).
	apply func(c *Settings, v string)
}

// s3EndpointVars are in the AWS SDKs' order, the service's own first
// (https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html).
var s3EndpointVars = []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}

func pairs() []pair {
	s3 := func(get func(f *File) string) func(*File) (string, bool) {
		return func(f *File) (string, bool) {
			v := get(f)
			return v, f.IsS3() && v != ""
		}
	}
	same := func(v string, _ bool) string { return v }
	url := func(v string, _ bool) string { return strings.ToLower(strings.TrimRight(v, "/")) }
	return []pair{
		{"bucket", []string{"S3_BUCKET_NAME"}, "config.bucket", s3(func(f *File) string { return f.S3.Bucket }), same, false,
			func(c *Settings, v string) { c.S3BucketName = v }},
		{"prefix", []string{"S3_PREFIX"}, "prefix", func(f *File) (string, bool) { return f.KeyPrefix(), f.KeyPrefix() != "" }, same, false,
			func(c *Settings, v string) { c.S3Prefix = v }},
		{"output_dir", []string{"OUTPUT_DIR"}, "config.directory", func(f *File) (string, bool) { return f.FS.Directory, !f.IsS3() && f.FS.Directory != "" },
			same, false, func(c *Settings, v string) { c.OutputDir = v }},
		{"endpoint", s3EndpointVars, "config.endpoint", s3(endpointOf), url, false, nil},
		// For the S3 client alone, with no variable: AWS_REGION, which EKS injects into
		// every IRSA pod, is STS's and Secrets Manager's and may differ from the bucket's.
		{"region", nil, "config.region", s3((*File).Region), same, false, nil},
		{"sts_endpoint", []string{"AWS_ENDPOINT_URL_STS"}, "config.sts_endpoint", s3(func(f *File) string { return f.S3.STSEndpoint }), url, false, nil},
		{"access_key", []string{"AWS_ACCESS_KEY_ID"}, "config.access_key", s3(func(f *File) string { return f.S3.AccessKey }), same, true, nil},
		{"secret_key", []string{"AWS_SECRET_ACCESS_KEY"}, "config.secret_key", s3(func(f *File) string { return f.S3.SecretKey }), same, true, nil},
		{"session_token", []string{"AWS_SESSION_TOKEN"}, "config.session_token", s3(func(f *File) string {
			_, _, token, _ := f.StaticKeys()
			return token
		}), same, true, nil},
		{"sse", []string{"S3_SSE"}, "config.sse_config.type", s3(func(f *File) string { m, _ := f.SSE(); return m }), same, false,
			func(c *Settings, v string) { c.SSE = v }},
		{"sse_kms_key_id", []string{"S3_SSE_KMS_KEY_ID"}, "config.sse_config.kms_key_id", s3(func(f *File) string { _, k := f.SSE(); return k }), same, false,
			func(c *Settings, v string) { c.SSEKMSKeyID = v }},
		{"part_size", []string{"S3_PART_SIZE_MIB"}, "config.part_size", s3(func(f *File) string { return itoa(f.PartSize()) }), mibToBytes, false, nil},
		{"max_attempts", []string{"AWS_MAX_ATTEMPTS"}, "config.max_retries", s3(func(f *File) string { return itoa(int64(f.MaxAttempts())) }), same, false, nil},
	}
}

// endpointOf is the endpoint as a URL, AWS's too, to compare with AWS_ENDPOINT_URL_S3.
func endpointOf(f *File) string {
	if f.S3.Endpoint == "" {
		return ""
	}
	return f.S3.scheme() + f.S3.Endpoint
}

func itoa(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// mibToBytes compares S3_PART_SIZE_MIB with part_size, in bytes.
func mibToBytes(v string, env bool) string {
	if !env {
		return v
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return v
	}
	return strconv.FormatInt(int64(n)<<20, 10)
}

// loadObjectStore reads the file and the variables it must agree with, and fills the rest.
func (c *Settings) loadObjectStore(lookup func(string) (string, bool)) {
	st := &c.store
	st.env = map[string]string{}
	for _, p := range pairs() {
		for _, name := range p.vars {
			if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
				st.env[name] = strings.TrimSpace(v)
			}
		}
	}
	if c.ObjectStoreConfigFile == "" {
		return
	}
	b, err := exporter.ReadFileMax(c.ObjectStoreConfigFile, maxObjectStoreFile)
	if err != nil {
		st.err = fmt.Errorf("cannot read the file: %v", err)
		return
	}
	if st.file, st.err = Parse(b); st.err != nil {
		return
	}
	if len(st.file.Validate()) > 0 {
		return // Validate reports them
	}
	st.tls, st.err = st.file.TLS()
	for _, p := range pairs() {
		if v, ok := p.file(st.file); ok && p.apply != nil && st.envOf(p) == "" {
			p.apply(c, v)
		}
	}
}

// usable reports whether the file was read, parsed and accepted.
func (st *objectStore) usable() bool {
	return st.file != nil && st.err == nil && len(st.file.Validate()) == 0
}

// envOf is the first variable of p that was set, or "".
func (st *objectStore) envOf(p pair) string {
	for _, name := range p.vars {
		if v := st.env[name]; v != "" {
			return name
		}
	}
	return ""
}

// checkObjectStore reports an unreadable file, refused fields, and disagreeing variables.
func checkObjectStore(c *Settings, bad badFunc) {
	st := &c.store
	if c.ObjectStoreConfigFile == "" {
		return
	}
	if st.file == nil || st.err != nil {
		bad(c.ObjectStoreConfigFile, "%v", st.err)
		return
	}
	if errs := st.file.Validate(); len(errs) > 0 {
		for _, e := range errs {
			bad(c.ObjectStoreConfigFile, "%s: %s", e.Field, e.Msg)
		}
		return
	}
	for _, p := range pairs() {
		fv, ok := p.file(st.file)
		name := st.envOf(p)
		if !ok || name == "" || p.norm(st.env[name], true) == p.norm(fv, false) {
			continue
		}
		ev := st.env[name]
		if p.secret {
			fv, ev = "REDACTED", "REDACTED"
		}
		bad(c.ObjectStoreConfigFile, "%s %q disagrees with %s=%q: set one of them, or the same value in both", p.path, fv, name, ev)
	}
	switch {
	case st.file.IsS3() && st.env["OUTPUT_DIR"] != "":
		bad(c.ObjectStoreConfigFile, "type S3 names a bucket, but OUTPUT_DIR=%q writes to a directory: set one of them", st.env["OUTPUT_DIR"])
	case strings.EqualFold(st.file.Type, TypeFilesystem) && c.S3BucketName != "":
		bad(c.ObjectStoreConfigFile, "type %s writes to a directory, but S3_BUCKET_NAME=%q names a bucket: set one of them", st.file.Type, c.S3BucketName)
	}
}

// PartSizeBytes is the file's part_size (or disable_multipart), else S3_PART_SIZE_MIB.
func (c *Settings) PartSizeBytes() int64 {
	if f := c.store.file; f != nil && f.PartSize() > 0 {
		return f.PartSize()
	}
	return int64(c.S3PartSizeMiB) << 20
}

// AWSLookup answers the SDK's endpoint variables from the file when the environment does
// not set them, so the S3 and STS clients and the logs see one endpoint.
func (c *Settings) AWSLookup(lookup func(string) (string, bool)) func(string) (string, bool) {
	f := c.store.file
	if f == nil || !f.IsS3() {
		return lookup
	}
	fromFile := map[string]string{"AWS_ENDPOINT_URL_S3": f.EndpointURL(), "AWS_ENDPOINT_URL_STS": f.S3.STSEndpoint}
	return func(name string) (string, bool) {
		v, ok := lookup(name)
		if fv := fromFile[name]; fv != "" && (!ok || strings.TrimSpace(v) == "") {
			return fv, true
		}
		return v, ok
	}
}

// Setting is one destination setting and where its value came from.
type Setting struct {
	Name, Value, From string
}

// String is the setting as the start-up line shows it, a URL's credentials redacted.
func (s Setting) String() string {
	return exporter.Redact(s.Name + "=" + s.Value + " (" + s.From + ")")
}

// MarshalText makes a logged Setting the one line String gives.
func (s Setting) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Sources lists the settings and their sources, secrets redacted, for the start-up line.
func (c *Settings) Sources() []Setting {
	st := &c.store
	var out []Setting
	for _, p := range pairs() {
		var fv string
		var inFile bool
		if st.file != nil {
			fv, inFile = p.file(st.file)
		}
		name := st.envOf(p)
		from, v := "", fv
		switch {
		case inFile && name != "":
			from = name + " and OBJECT_STORE_CONFIG_FILE " + p.path + " (agree)"
		case inFile:
			from = "OBJECT_STORE_CONFIG_FILE " + p.path
		case name != "":
			// As compared: S3_PART_SIZE_MIB in bytes, like part_size.
			from, v = name, p.norm(st.env[name], true)
		default:
			continue
		}
		if p.secret {
			v = "REDACTED"
		}
		out = append(out, Setting{p.setting, v, from})
	}
	if f := st.file; f != nil && f.IsS3() {
		out = append(out, Setting{"addressing", string(f.Addressing()), "OBJECT_STORE_CONFIG_FILE config.bucket_lookup_type"})
		if m := f.S3.PutUserMetadata; len(m) > 0 {
			out = append(out, Setting{"object_headers", strings.Join(slices.Sorted(maps.Keys(m)), ","), "OBJECT_STORE_CONFIG_FILE config.put_user_metadata"})
		}
		if st.tls != nil {
			out = append(out, Setting{"tls", "custom", "OBJECT_STORE_CONFIG_FILE config.http_config"})
		}
	}
	return out
}

// objectStoreWarnings are the file's notices: static keys, TLS verification off, and
// fields accepted without effect.
func (c *Settings) objectStoreWarnings() []string {
	f := c.store.file
	if f == nil {
		return nil
	}
	w := f.Notices()
	if ak, _, _, ok := f.StaticKeys(); ok {
		w = append(w, fmt.Sprintf("OBJECT_STORE_CONFIG_FILE sets static keys (access_key %s...): they sign every AWS call instead of IRSA; IRSA_PARENT_IAM_ROLE_ARN, when set, is still assumed with them",
			ak[:min(4, len(ak))]))
	}
	if t := c.store.tls; t != nil && t.InsecureSkipVerify {
		w = append(w, "OBJECT_STORE_CONFIG_FILE http_config insecure_skip_verify is on: the S3 endpoint's certificate is not checked")
	}
	return w
}

// maxAttempts is max_retries, else the lookup's AWS_MAX_ATTEMPTS, else 0 (the SDK's default).
func (c *Settings) maxAttempts() int {
	if f := c.store.file; f != nil && f.MaxAttempts() > 0 {
		return f.MaxAttempts()
	}
	n, _ := strconv.Atoi(c.store.env["AWS_MAX_ATTEMPTS"])
	return max(n, 0)
}
