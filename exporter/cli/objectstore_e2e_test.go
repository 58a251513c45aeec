package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/faultproxy"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// TestObjectStoreFileOnly: the exporter configured for S3 by nothing but
// a Kubecost-style object-store.yaml (static keys, insecure: true, a
// prefix, put_user_metadata) writes the archive under the prefix, with the
// metadata on every object and the canned ACL on every write request.
func TestObjectStoreFileOnly(t *testing.T) {
	m := miniotest.Start(t)
	const etlBucket = "kubecost-etl-backup"
	m.CreateBucket(t, etlBucket)
	// The proxy sees each write request's headers: MinIO accepts a canned
	// ACL but does not return it from HeadObject.
	proxy, err := faultproxy.New(m.Endpoint)
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
	sim := kubecostsim.NewServer(kubecostsim.Config{Seed: 7, RetentionDays: 15, Now: func() time.Time { return now }})
	t.Cleanup(sim.Close)

	// Nothing AWS-related in the environment: keys, endpoint and region
	// come from the file alone.
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_STS", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"} {
		t.Setenv(k, "")
	}
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
`, etlBucket, strings.TrimPrefix(proxy.URL, "http://"), m.AccessKey, m.SecretKey, closedAddr(t))
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"OBJECT_STORE_CONFIG_FILE": file,
		"CLUSTER_ID":               clusterARN,
		"KUBECOST_API_ENDPOINT":    sim.URL,
		"BACKFILL_PERIOD_DAYS":     "7",
		"LOG_FORMAT":               "json",
	}
	run := func(extra map[string]string) (int, string) {
		lookup := func(k string) (string, bool) {
			if v, ok := extra[k]; ok {
				return v, true
			}
			v, ok := env[k]
			return v, ok
		}
		var buf bytes.Buffer
		code := cli.RunWith(context.Background(), lookup, &buf, cli.Hooks{Now: func() time.Time { return now }})
		return code, buf.String()
	}

	// A dry run prints where each setting came from, secrets redacted.
	code, logs := run(map[string]string{"DRY_RUN": "true"})
	if code != 0 {
		t.Fatalf("dry run exit %d:\n%s", code, logs)
	}
	for _, want := range []string{
		"bucket=kubecost-etl-backup (OBJECT_STORE_CONFIG_FILE config.bucket)",
		"prefix=team-a/costs/ (OBJECT_STORE_CONFIG_FILE prefix)",
		"secret_key=REDACTED (OBJECT_STORE_CONFIG_FILE config.secret_key)",
		"static keys",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("dry run log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, m.SecretKey) {
		t.Errorf("the log shows the secret key")
	}

	code, logs = run(nil)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, logs)
	}
	client := m.S3Client(t)
	out, err := client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(etlBucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Contents) == 0 {
		t.Fatalf("nothing written:\n%s", logs)
	}
	for _, o := range out.Contents {
		key := aws.ToString(o.Key)
		if !strings.HasPrefix(key, "team-a/costs/account_id=111122223333/region=us-east-1/year=") {
			t.Errorf("key %q is not under the file's prefix", key)
		}
		head, err := client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(etlBucket), Key: o.Key})
		if err != nil {
			t.Fatal(err)
		}
		// The exporter's own metadata stays next to the file's.
		if head.Metadata["team"] != "finops" || head.Metadata["rows"] == "" {
			t.Errorf("%s metadata %v: want team=finops and the exporter's rows", key, head.Metadata)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	writes := len(acls[faultproxy.PutObject]) + len(acls[faultproxy.CreateMultipartUpload])
	t.Logf("%d objects under the prefix, %d write requests", len(out.Contents), writes)
	if writes < len(out.Contents) {
		t.Errorf("%d write requests for %d objects", writes, len(out.Contents))
	}
	for op, list := range acls {
		for _, acl := range list {
			if acl != "bucket-owner-full-control" {
				t.Errorf("%s sent X-Amz-Acl %q", op, acl)
			}
		}
	}

	// One truth: a variable that disagrees with the file stops the run
	// with exit 2, naming both.
	code, logs = run(map[string]string{"S3_BUCKET_NAME": "another-bucket"})
	if code != cli.ExitConfig || !strings.Contains(logs, "config.bucket") || !strings.Contains(logs, "S3_BUCKET_NAME") {
		t.Errorf("disagreeing S3_BUCKET_NAME: exit %d:\n%s", code, logs)
	}
}
