package e2e_test

import (
	"bytes"
	"context"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/awsfake"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// TestChainedRun is a whole production-shaped run: the pod's web identity
// (child role, cluster account) assumes the parent role of the pipeline
// account, whose credentials are a MinIO user holding exactly the
// Terraform module's policy. Every S3 call must use the parent.
func TestChainedRun(t *testing.T) {
	const (
		pipelineBucket = "cost-pipeline"
		childARN       = "arn:aws:iam::111111111111:role/kubecost-s3-exporter-irsa"
		parentARN      = "arn:aws:iam::222222222222:role/pipeline/kubecost-s3-exporter-writer"
		cluster        = "arn:aws:eks:us-east-1:111111111111:cluster/prod"
		writer, secret = "pipeline-writer", "pipeline-writer-secret-5b2d"
	)
	m := miniotest.Start(t)
	m.CreateBucket(t, pipelineBucket)
	m.AddUser(t, writer, secret, awsfake.WriterPolicy(pipelineBucket, "", "111111111111", "us-east-1", "prod"))

	fake := awsfake.Start(t)
	token := "eyJhbGciOiJSUzI1NiJ9.projected-sa-token.chained"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	fake.AllowWebIdentity(childARN, token)
	fake.AllowAssumeRole(childARN, parentARN, awsfake.MinIOIssuer(m.Endpoint, m.Region, writer, secret))

	sim := newSim(t, kubecostsim.Config{Seed: 3, RetentionDays: 15})

	env := map[string]string{
		"S3_BUCKET_NAME":              pipelineBucket,
		"CLUSTER_ID":                  cluster,
		"IRSA_PARENT_IAM_ROLE_ARN":    parentARN,
		"KUBECOST_API_ENDPOINT":       sim.URL,
		"BACKFILL_PERIOD_DAYS":        "5",
		"AWS_REGION":                  "us-east-1",
		"AWS_ROLE_ARN":                childARN,
		"AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile,
		"AWS_ENDPOINT_URL_STS":        fake.STSURL,
		"AWS_ENDPOINT_URL_S3":         m.Endpoint,
		"LOG_FORMAT":                  "json",
	}
	// The SDK also reads the process environment: make sure no static
	// credentials short-circuit the web identity.
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(k, "")
	}
	for k, v := range env {
		if strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, v)
		}
	}
	run := func(extra map[string]string) (int, string) {
		var buf bytes.Buffer
		lookup := func(k string) (string, bool) {
			if v, ok := extra[k]; ok {
				return v, true
			}
			v, ok := env[k]
			return v, ok
		}
		code := cli.RunWith(context.Background(), lookup, &buf, cli.Hooks{Now: func() time.Time { return now }})
		return code, buf.String()
	}

	code, logs := run(nil)
	t.Logf("chained run log:\n%s", logs)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	// The writer policy lets the run look for uploads left by killed runs.
	if strings.Contains(logs, "could not clean up unfinished uploads") {
		t.Errorf("the clean-up of unfinished uploads was refused under the writer policy:\n%s", logs)
	}
	for _, want := range []string{
		"web-identity " + childARN + " -> assume-role " + parentARN,
		`"bucket_owner":"222222222222"`,
		`"session":"kubecost-s3-exporter-prod"`,
		`"msg":"day written"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s", want)
		}
	}
	layout := exporter.Layout{Account: "111111111111", Region: "us-east-1", Cluster: "prod"}
	first, last := exporter.Window(now, 5, exporter.DefaultSettle)
	var n int
	for k := range objectsOf(t, m) {
		d, ok := layout.ParseDay(k)
		if !ok || d.Before(first) || d.After(last) {
			t.Errorf("unexpected object %s", k)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d objects, want the 2 days of a 5-day window", n)
	}
	// The report opens the archive with the run's environment, through the
	// same chain (web identity, then the parent, whose account owns the
	// bucket).
	if got := reportFiles(t, env); got != n {
		t.Errorf("report read %d files through the chained role, run wrote %d", got, n)
	}

	// A codec switch re-exports both days and deletes the old files: the
	// policy's HeadObject (s3:GetObject) and DeleteObject on own keys.
	code, logs = run(map[string]string{"COMPRESSION": "zstd"})
	if code != cli.ExitOK || strings.Count(logs, `"reason":"config-changed"`) < 2 {
		t.Fatalf("codec switch through the chained role: exit %d\n%s", code, logs)
	}
	for k := range objectsOf(t, m) {
		if !strings.HasSuffix(k, "_prod.zstd.parquet") {
			t.Errorf("after the codec switch %s remains", k)
		}
	}

	// The writer's policy lets prod read and delete its own files only:
	// never prod-eu's, whose name starts with prod's.
	admin, asWriter := m.S3Client(t), m.S3ClientAs(t, writer, secret)
	prodEU := exporter.Layout{Account: "111111111111", Region: "us-east-1", Cluster: "prod-eu"}.Key(first, exporter.Snappy)
	if _, err := admin.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(pipelineBucket), Key: aws.String(prodEU), Body: strings.NewReader("prod-eu's")}); err != nil {
		t.Fatal(err)
	}
	own := layout.Key(first, exporter.Zstd)
	if _, err := asWriter.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(pipelineBucket), Key: aws.String(own)}); err != nil {
		t.Errorf("the writer cannot head its own %s: %v", own, err)
	}
	if _, err := asWriter.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(pipelineBucket), Key: aws.String(prodEU)}); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("the writer may head prod-eu's %s: %v", prodEU, err)
	}
	if _, err := asWriter.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(pipelineBucket), Key: aws.String(prodEU)}); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("the writer may delete prod-eu's %s: %v", prodEU, err)
	}
	if !objectsOf(t, m)[prodEU] {
		t.Errorf("prod-eu's %s is gone", prodEU)
	}
	if got := fake.CallsTo("AssumeRole"); len(got) == 0 || got[0].RoleARN != parentARN {
		t.Errorf("AssumeRole calls %+v, want the parent", got)
	}

	// No credential, token or session token appears in the logs.
	secrets := append(fake.Secrets(), secret, token)
	for _, c := range fake.Calls() {
		secrets = append(secrets, c.IssuedKeyID)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(logs, s) {
			t.Errorf("a secret appears in the logs: %.6s…", s)
		}
	}

	// A parent role that cannot be assumed stops the run with exit 1 and
	// a message saying which role and why.
	code, logs = run(map[string]string{"IRSA_PARENT_IAM_ROLE_ARN": "arn:aws:iam::222222222222:role/not-trusted"})
	if code != cli.ExitRuntime || !strings.Contains(logs, "cannot assume parent role arn:aws:iam::222222222222:role/not-trusted") {
		t.Errorf("untrusted parent: exit %d, want 1 with a clear message\n%s", code, logs)
	}

	// A cluster the parent's policy does not cover is denied by MinIO on
	// its first access to its own files (here the HeadObject of the
	// prod-eu file put above): the policy, not the exporter, keeps
	// clusters apart.
	code, logs = run(map[string]string{"CLUSTER_ID": "arn:aws:eks:us-east-1:111111111111:cluster/prod-eu", "FORCE_DATES": ""})
	if code != cli.ExitRuntime || !strings.Contains(logs, "StatusCode: 403") {
		t.Errorf("other cluster: exit %d, want 1 with AccessDenied\n%s", code, logs)
	}
}

func objectsOf(t *testing.T, m *miniotest.Server) map[string]bool {
	h := &harness{t: t, s3: m.S3Client(t)}
	out := map[string]bool{}
	for k := range h.objectsIn("cost-pipeline") {
		out[k] = true
	}
	return out
}
