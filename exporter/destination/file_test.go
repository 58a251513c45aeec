package destination

import (
	"strings"
	"testing"
)

const base = "type: S3\nconfig:\n  bucket: cost-archive\n  endpoint: s3.amazonaws.com\n"

// TestRefused: every refused field, type or unknown key is an error that
// names it.
func TestRefused(t *testing.T) {
	cases := []struct{ name, yaml, field string }{
		{"gcs", "type: GCS\nconfig:\n  bucket: b\n", "type"},
		{"azure lower case", "type: azure\nconfig: {}\n", "type"},
		{"unknown type", "type: FTP\n", "type"},
		{"no type", "config:\n  bucket: b\n", "type"},
		{"unknown top key", base + "prefixes: a\n", "prefixes"},
		{"unknown config key", base + "  buckett: x\n", "config.buckett"},
		{"unknown nested key", base + "  http_config:\n    tls_config:\n      ca: x\n", "config.http_config.tls_config.ca"},
		{"old sse_encryption", base + "  sse_encryption: true\n", "config.sse_encryption"},
		{"sigv2", base + "  signature_version2: true\n", "config.signature_version2"},
		{"sse-c", base + "  sse_config:\n    type: SSE-C\n    encryption_key: /k\n", "config.sse_config.type"},
		{"sse unknown", base + "  sse_config:\n    type: SSE-MagicKey\n", "config.sse_config.type"},
		{"kms without key", base + "  sse_config:\n    type: SSE-KMS\n", "config.sse_config.kms_key_id"},
		{"no endpoint", "type: S3\nconfig:\n  bucket: bbb\n", "config.endpoint"},
		{"endpoint with scheme", "type: S3\nconfig:\n  bucket: bbb\n  endpoint: https://minio:9000\n", "config.endpoint"},
		{"bad bucket", "type: S3\nconfig:\n  bucket: Bad_Bucket\n  endpoint: s3.amazonaws.com\n", "config.bucket"},
		{"access without secret", base + "  access_key: AKIA\n", "config.secret_key"},
		{"secret without access", base + "  secret_key: s\n", "config.access_key"},
		{"sdk auth and keys", base + "  aws_sdk_auth: true\n  access_key: a\n  secret_key: s\n", "config.aws_sdk_auth"},
		{"list v1", base + "  list_objects_version: v1\n", "config.list_objects_version"},
		{"list v3", base + "  list_objects_version: v3\n", "config.list_objects_version"},
		{"part too small", base + "  part_size: 1024\n", "config.part_size"},
		{"part too large", base + "  part_size: 5368709121\n", "config.part_size"},
		{"metadata too large", base + "  put_user_metadata:\n    X-Amz-Meta-Note: " + strings.Repeat("n", 2048) + "\n", "config.put_user_metadata"},
		{"metadata value not ASCII", base + "  put_user_metadata:\n    team: \"é\"\n", "config.put_user_metadata.team"},
		{"sts not url", base + "  sts_endpoint: sts\n", "config.sts_endpoint"},
		{"metadata content-type", base + "  put_user_metadata:\n    Content-Type: text/plain\n", "config.put_user_metadata.Content-Type"},
		{"metadata sse header", base + "  put_user_metadata:\n    X-Amz-Server-Side-Encryption: AES256\n", "config.put_user_metadata.X-Amz-Server-Side-Encryption"},
		{"metadata bad acl", base + "  put_user_metadata:\n    X-Amz-Acl: everyone\n", "config.put_user_metadata.X-Amz-Acl"},
		{"metadata object lock", base + "  put_user_metadata:\n    X-Amz-Object-Lock-Mode: GOVERNANCE\n", "config.put_user_metadata.X-Amz-Object-Lock-Mode"},
		{"cert without key", base + "  http_config:\n    tls_config:\n      cert_file: /c\n", "config.http_config.tls_config.cert_file"},
		{"bad lookup type", base + "  bucket_lookup_type: dns\n", "config"},
		{"wrong value type", base + "  part_size: big\n", "config"},
		{"filesystem without directory", "type: FILESYSTEM\nconfig: {}\n", "config.directory"},
		{"prefix with //", base + "prefix: a//b\n", "prefix"},
		{"prefix with a backslash", base + "prefix: a\\b\n", "prefix"},
		{"prefix with a tab", base + "prefix: \"a\\tb\"\n", "prefix"},
		{"metadata key with a space", base + "  put_user_metadata:\n    \"team name\": a\n", "config.put_user_metadata.team name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.yaml))
			var msg string
			switch {
			case err != nil:
				msg = err.Error()
			default:
				errs := f.Validate()
				if len(errs) == 0 {
					t.Fatalf("accepted:\n%s", tc.yaml)
				}
				msg = errs.Error()
				if errs[0].Field != tc.field {
					t.Errorf("field %q, want %q (%s)", errs[0].Field, tc.field, msg)
				}
			}
			if !strings.Contains(msg, tc.field) {
				t.Errorf("error %q does not name %q", msg, tc.field)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
		})
	}
}

// TestMapping: the fields the exporter maps, and the defaults it keeps.
func TestMapping(t *testing.T) {
	f, err := Parse([]byte(`type: s3
prefix: /team-a/costs/
config:
  bucket: cost-archive
  endpoint: minio.local:9000
  region: eu-west-1
  insecure: true
  access_key: AKIAEXAMPLE
  secret_key: secret
  bucket_lookup_type: virtual-hosted
  part_size: 16777216
  max_retries: 5
  sts_endpoint: http://sts.local:9000
  sse_config:
    type: SSE-KMS
    kms_key_id: alias/costs
    kms_encryption_context:
      team: a
  put_user_metadata:
    X-Amz-Acl: bucket-owner-full-control
    X-Amz-Storage-Class: STANDARD_IA
    X-Amz-Meta-Owner: finops
    team: a
`))
	if err != nil {
		t.Fatal(err)
	}
	if errs := f.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("KeyPrefix", f.KeyPrefix(), "team-a/costs/")
	check("EndpointURL", f.EndpointURL(), "http://minio.local:9000")
	check("Region", f.Region(), "eu-west-1")
	check("Addressing", f.Addressing(), LookupVirtualHosted)
	check("PartSize", f.PartSize(), int64(16<<20))
	check("MaxAttempts", f.MaxAttempts(), 5)
	mode, key := f.SSE()
	check("SSE", mode+" "+key, "aws:kms alias/costs")
	check("KMSContext", f.KMSContext(), "eyJ0ZWFtIjoiYSJ9") // {"team":"a"}
	ak, sk, _, ok := f.StaticKeys()
	check("StaticKeys", ak+"/"+sk, "AKIAEXAMPLE/secret")
	check("StaticKeys ok", ok, true)
	h := f.Headers()
	check("ACL", h.ACL, "bucket-owner-full-control")
	check("StorageClass", h.StorageClass, "STANDARD_IA")
	check("meta Owner", h.Metadata["Owner"], "finops")
	check("meta team", h.Metadata["team"], "a")

	aws, err := Parse([]byte(base + "  region: us-west-2\n"))
	if err != nil {
		t.Fatal(err)
	}
	check("AWS EndpointURL", aws.EndpointURL(), "")
	check("AWS PartSize default", aws.PartSize(), int64(0))
	check("AWS S3.PartSize (objstore's default)", aws.S3.PartSize, uint64(64<<20))
	// auto resolves as minio-go resolves it: virtual-hosted on AWS.
	check("AWS Addressing", aws.Addressing(), LookupVirtualHosted)
	if _, _, _, ok := aws.StaticKeys(); ok {
		t.Error("no keys in the file must leave IRSA in charge")
	}
	regional, _ := Parse([]byte("type: S3\nconfig:\n  bucket: b-1\n  endpoint: s3.eu-central-1.amazonaws.com\n"))
	check("region from endpoint", regional.Region(), "eu-central-1")
}

// TestNotices: a field accepted without effect says so once, only when
// written.
func TestNotices(t *testing.T) {
	f, err := Parse([]byte(base + "  trace:\n    enable: true\n  http_config:\n    idle_conn_timeout: 1m\n"))
	if err != nil {
		t.Fatal(err)
	}
	n := f.Notices()
	if len(n) != 2 || !strings.Contains(n[0], "config.trace") || !strings.Contains(n[1], "config.http_config.idle_conn_timeout") {
		t.Errorf("notices %q", n)
	}
	plain, _ := Parse([]byte(base))
	if n := plain.Notices(); len(n) != 0 {
		t.Errorf("defaults gave notices %q", n)
	}
}
