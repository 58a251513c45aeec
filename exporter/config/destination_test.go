package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

const storeFile = `type: S3
prefix: team-a/costs
config:
  bucket: kubecost-etl-backup
  endpoint: minio.minio:9000
  region: us-east-1
  insecure: true
  access_key: AKIAFILEKEY
  secret_key: file-secret-value
  part_size: 16777216
  sts_endpoint: http://sts.minio:9000
  sse_config:
    type: SSE-KMS
    kms_key_id: alias/costs
  put_user_metadata:
    X-Amz-Acl: bucket-owner-full-control
`

func writeStore(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "object-store.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The file alone configures the destination: the bucket, prefix and
// encryption fill the variables' fields, and Settings says where each
// value came from, with secrets redacted.
func TestObjectStoreFileAlone(t *testing.T) {
	t.Parallel()
	c, err := loadWith(map[string]string{"S3_BUCKET_NAME": unset, "OBJECT_STORE_CONFIG_FILE": writeStore(t, storeFile)})
	if err != nil {
		t.Fatal(err)
	}
	if c.S3BucketName != "kubecost-etl-backup" || c.S3Prefix != "team-a/costs/" || c.SSE != "aws:kms" || c.SSEKMSKeyID != "alias/costs" {
		t.Errorf("bucket %q prefix %q sse %q key %q", c.S3BucketName, c.S3Prefix, c.SSE, c.SSEKMSKeyID)
	}
	if c.PartSizeBytes() != 16<<20 {
		t.Errorf("part size %d", c.PartSizeBytes())
	}
	var lines []string
	for _, s := range c.Sources() {
		lines = append(lines, s.String())
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"bucket=kubecost-etl-backup (OBJECT_STORE_CONFIG_FILE config.bucket)",
		"prefix=team-a/costs/ (OBJECT_STORE_CONFIG_FILE prefix)",
		"endpoint=http://minio.minio:9000 (OBJECT_STORE_CONFIG_FILE config.endpoint)",
		"access_key=REDACTED (OBJECT_STORE_CONFIG_FILE config.access_key)",
		"secret_key=REDACTED (OBJECT_STORE_CONFIG_FILE config.secret_key)",
		"object_headers=X-Amz-Acl (OBJECT_STORE_CONFIG_FILE config.put_user_metadata)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("settings lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "file-secret-value") || strings.Contains(got, "AKIAFILEKEY") {
		t.Errorf("settings show a secret:\n%s", got)
	}
	lookup := c.AWSLookup(func(string) (string, bool) { return "", false })
	if v, _ := lookup("AWS_ENDPOINT_URL_S3"); v != "http://minio.minio:9000" {
		t.Errorf("AWS_ENDPOINT_URL_S3 from the file = %q", v)
	}
	if v, _ := lookup("AWS_ENDPOINT_URL_STS"); v != "http://sts.minio:9000" {
		t.Errorf("AWS_ENDPOINT_URL_STS from the file = %q", v)
	}
	// A variable the environment sets is passed through (the two agree).
	env := c.AWSLookup(func(k string) (string, bool) { return "http://env:1", k == "AWS_ENDPOINT_URL_SECRETS_MANAGER" })
	if v, _ := env("AWS_ENDPOINT_URL_SECRETS_MANAGER"); v != "http://env:1" {
		t.Errorf("AWS_ENDPOINT_URL_SECRETS_MANAGER = %q", v)
	}
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "static keys") || strings.Contains(w, "file-secret-value") {
		t.Errorf("warnings %q", w)
	}
}

// One truth: a variable that sets what the file sets must agree, else the
// error names both; agreeing values pass and say so.
func TestObjectStoreAgreement(t *testing.T) {
	t.Parallel()
	path := writeStore(t, storeFile)
	for _, tc := range []struct {
		set           map[string]string
		path, varName string
	}{
		{map[string]string{"S3_BUCKET_NAME": "other-bucket"}, "config.bucket", "S3_BUCKET_NAME"},
		{map[string]string{"S3_PREFIX": "team-b/"}, "prefix", "S3_PREFIX"},
		{map[string]string{"AWS_ENDPOINT_URL_S3": "http://other:9000"}, "config.endpoint", "AWS_ENDPOINT_URL_S3"},
		{map[string]string{"AWS_ENDPOINT_URL": "https://minio.minio:9000"}, "config.endpoint", "AWS_ENDPOINT_URL"},
		{map[string]string{"S3_SSE": "AES256"}, "config.sse_config.type", "S3_SSE"},
		{map[string]string{"S3_PART_SIZE_MIB": "8"}, "config.part_size", "S3_PART_SIZE_MIB"},
		{map[string]string{"AWS_ACCESS_KEY_ID": "AKIAENVKEY"}, "config.access_key", "AWS_ACCESS_KEY_ID"},
		{map[string]string{"OUTPUT_DIR": "/tmp/out"}, "type S3", "OUTPUT_DIR"},
	} {
		env := map[string]string{"S3_BUCKET_NAME": unset, "OBJECT_STORE_CONFIG_FILE": path}
		for k, v := range tc.set {
			env[k] = v
		}
		_, err := loadWith(env)
		if err == nil {
			t.Errorf("%v: accepted", tc.set)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "OBJECT_STORE_CONFIG_FILE") || !strings.Contains(msg, tc.path) || !strings.Contains(msg, tc.varName) {
			t.Errorf("%v: error %q does not name both %s and %s", tc.set, msg, tc.path, tc.varName)
		}
		if strings.Contains(msg, "AKIA") || strings.Contains(msg, "secret-value") {
			t.Errorf("error shows a secret: %q", msg)
		}
	}
	// AWS_REGION (EKS injects the cluster's) is not the bucket's region:
	// they may differ.
	c, err := loadWith(map[string]string{"S3_BUCKET_NAME": "kubecost-etl-backup", "S3_PART_SIZE_MIB": "16", "AWS_REGION": "eu-west-1",
		"AWS_ENDPOINT_URL_S3": "http://minio.minio:9000/", "OBJECT_STORE_CONFIG_FILE": path})
	if err != nil {
		t.Fatalf("agreeing values refused: %v", err)
	}
	found := false
	for _, s := range c.Sources() {
		if s.Name == "bucket" {
			found = s.From == "S3_BUCKET_NAME and OBJECT_STORE_CONFIG_FILE config.bucket (agree)"
		}
	}
	if !found {
		t.Errorf("settings %v", c.Sources())
	}
}

// A refused field, an unknown key, an unreadable file and another type
// are each one configuration error naming the variable and the field.
func TestObjectStoreRefused(t *testing.T) {
	t.Parallel()
	for body, field := range map[string]string{
		"type: GCS\nconfig:\n  bucket: b\n":                                                 "type GCS",
		storeFile + "  signature_version2: true\n":                                          "config.signature_version2",
		storeFile + "  bucket_name: x\n":                                                    "config.bucket_name",
		strings.Replace(storeFile, "SSE-KMS", "SSE-C", 1):                                   "config.sse_config.type",
		storeFile + "  http_config:\n    tls_config:\n      ca_file: /nonexistent/ca.pem\n": "ca_file",
	} {
		_, err := loadWith(map[string]string{"OBJECT_STORE_CONFIG_FILE": writeStore(t, body), "S3_BUCKET_NAME": unset})
		if err == nil || !strings.Contains(err.Error(), "OBJECT_STORE_CONFIG_FILE") || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v does not name %s", field, err, field)
		}
	}
	_, err := loadWith(map[string]string{"OBJECT_STORE_CONFIG_FILE": "/nonexistent/object-store.yaml"})
	if err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("missing file: %v", err)
	}
	c, err := loadWith(map[string]string{"OBJECT_STORE_CONFIG_FILE": writeStore(t, "type: FILESYSTEM\nconfig:\n  directory: /data/costs\n"), "S3_BUCKET_NAME": unset})
	if err != nil || c.OutputDir != "/data/costs" {
		t.Errorf("FILESYSTEM: %v, OUTPUT_DIR %q", err, c.OutputDir)
	}
}

// Without a file, Settings names the variables that set the destination,
// secrets redacted, and leaves out what nobody set.
func TestSettingsWithoutFile(t *testing.T) {
	t.Parallel()
	c, err := loadWith(map[string]string{"S3_PREFIX": "team-a/", "AWS_SECRET_ACCESS_KEY": "env-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range c.Sources() {
		got[s.Name] = s.Value + " (" + s.From + ")"
	}
	want := map[string]string{
		"bucket":     "kubecost-cost-data (S3_BUCKET_NAME)",
		"prefix":     "team-a/ (S3_PREFIX)",
		"secret_key": "REDACTED (AWS_SECRET_ACCESS_KEY)",
	}
	if len(got) != len(want) {
		t.Errorf("settings %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// A refused file is reported by its own rule alone: S3_BUCKET_NAME, unset
// because the file names the bucket, is not reported missing as well, and
// the file's error names the field at fault only.
func TestObjectStoreRefusedAlone(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"bucket in the endpoint's host": strings.Replace(storeFile, "minio.minio:9000", "kubecost-etl-backup.s3.amazonaws.com", 1),
		"refused field":                 storeFile + "  signature_version2: true\n",
		"unknown key":                   storeFile + "  bucket_name: x\n",
		"not YAML":                      "type: S3\nconfig: [\n",
	} {
		_, err := loadWith(map[string]string{"S3_BUCKET_NAME": unset, "OBJECT_STORE_CONFIG_FILE": writeStore(t, body)})
		var errs exporter.FieldErrors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Field != "OBJECT_STORE_CONFIG_FILE" {
			t.Errorf("%s: want one OBJECT_STORE_CONFIG_FILE error, got %v", name, err)
			continue
		}
		if strings.Contains(err.Error(), "S3_BUCKET_NAME") {
			t.Errorf("%s: the bucket is reported too: %v", name, err)
		}
	}
	// The endpoint's error names the endpoint, not the bucket it holds.
	body := strings.Replace(storeFile, "minio.minio:9000", "kubecost-etl-backup.s3.amazonaws.com", 1)
	_, err := loadWith(map[string]string{"S3_BUCKET_NAME": unset, "OBJECT_STORE_CONFIG_FILE": writeStore(t, body)})
	if err == nil || !strings.Contains(err.Error(), "config.endpoint") || strings.Contains(err.Error(), "config.bucket:") {
		t.Errorf("bucket in the host: %v", err)
	}
}
