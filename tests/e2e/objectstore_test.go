package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/faultproxy"
)

// TestObjectStoreFileOnly: the exporter configured for S3 by nothing but
// a Kubecost-style object-store.yaml (static keys, insecure: true, a
// prefix, put_user_metadata) writes the archive under the prefix, with the
// metadata on every object and the canned ACL on every write request.
func TestObjectStoreFileOnly(t *testing.T) {
	h := newHarness(t)
	// The proxy sees each write request's headers: MinIO accepts a canned
	// ACL but does not return it from HeadObject.
	proxy, err := faultproxy.New(h.minio.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	var mu sync.Mutex
	acls := map[string][]string{} // op -> X-Amz-Acl of each request
	record := func(r *http.Request) {
		op, _ := faultproxy.Classify(r)
		mu.Lock()
		acls[op] = append(acls[op], r.Header.Get("X-Amz-Acl"))
		mu.Unlock()
	}
	proxy.SetRules(
		faultproxy.Rule{Op: faultproxy.PutObject, Action: faultproxy.Hook, Fn: record},
		faultproxy.Rule{Op: faultproxy.CreateMultipartUpload, Action: faultproxy.Hook, Fn: record},
	)

	// Nothing about S3 in the environment: bucket, keys, endpoint and
	// region come from the file alone.
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_STS", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"} {
		t.Setenv(k, "")
		delete(h.env, k)
	}
	delete(h.env, "S3_BUCKET_NAME")
	file := filepath.Join(t.TempDir(), "object-store.yaml")
	body := fmt.Sprintf(`type: S3
prefix: team-a/costs
config:
  bucket: %s
  endpoint: %s
  region: us-east-1
  insecure: true
  access_key: %s
  secret_key: %s
  # nothing listens here: the identity check fails fast, a warning only
  sts_endpoint: http://%s
  put_user_metadata:
    X-Amz-Acl: bucket-owner-full-control
    X-Amz-Meta-Team: finops
`, bucket, strings.TrimPrefix(proxy.URL, "http://"), h.minio.AccessKey, h.minio.SecretKey, closedAddr(t))
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	h.env["OBJECT_STORE_CONFIG_FILE"] = file
	h.env["BACKFILL_PERIOD_DAYS"] = "7"

	// A dry run prints where each setting came from, secrets redacted.
	code, logs := h.run(map[string]string{"DRY_RUN": "true"})
	if code != 0 {
		t.Fatalf("dry run exit %d:\n%s", code, logs)
	}
	for _, want := range []string{
		"bucket=" + bucket + " (OBJECT_STORE_CONFIG_FILE config.bucket)",
		"prefix=team-a/costs/ (OBJECT_STORE_CONFIG_FILE prefix)",
		"secret_key=REDACTED (OBJECT_STORE_CONFIG_FILE config.secret_key)",
		"static keys",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("dry run log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, h.minio.SecretKey) {
		t.Errorf("the log shows the secret key")
	}

	code, logs = h.run(nil)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, logs)
	}
	objects := h.objects()
	if len(objects) == 0 {
		t.Fatalf("nothing written:\n%s", logs)
	}
	for key := range objects {
		if !strings.HasPrefix(key, "team-a/costs/account_id=111122223333/region=us-east-1/year=") {
			t.Errorf("key %q is not under the file's prefix", key)
		}
		head, err := h.s3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		// The exporter's own metadata stays next to the file's.
		if head.Metadata["team"] != "finops" || head.Metadata["rows"] == "" {
			t.Errorf("%s metadata %v: want team=finops and the exporter's rows", key, head.Metadata)
		}
	}
	mu.Lock()
	writes := len(acls[faultproxy.PutObject]) + len(acls[faultproxy.CreateMultipartUpload])
	for op, list := range acls {
		for _, acl := range list {
			if acl != "bucket-owner-full-control" {
				t.Errorf("%s sent X-Amz-Acl %q", op, acl)
			}
		}
	}
	mu.Unlock()
	t.Logf("%d objects under the prefix, %d write requests", len(objects), writes)
	if writes < len(objects) {
		t.Errorf("%d write requests for %d objects", writes, len(objects))
	}

	// One truth: a variable that disagrees with the file stops the run
	// with exit 2, naming both.
	code, logs = h.run(map[string]string{"S3_BUCKET_NAME": "another-bucket"})
	if code != cli.ExitConfig || !strings.Contains(logs, "config.bucket") || !strings.Contains(logs, "S3_BUCKET_NAME") {
		t.Errorf("disagreeing S3_BUCKET_NAME: exit %d:\n%s", code, logs)
	}
}
