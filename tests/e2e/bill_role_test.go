package e2e_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/awsfake"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// readPolicy is read-only on one bucket, as the bill module's reader
// policy is on the export's prefix.
func readPolicy(bucket string) string {
	return `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::` + bucket + `"]},
	  {"Effect":"Allow","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::` + bucket + `/*"]}]}`
}

// TestBillInPayerAccount: the archive is read with the pod's chain
// (web identity, then IRSA_PARENT_IAM_ROLE_ARN), and the bill, in a bucket
// only the payer account's role may read, with BILL_ROLE_ARN assumed by
// the pod's own credentials. Without the role the archive's identity is
// shared, not loaded again, and the bill's bucket refuses it.
func TestBillInPayerAccount(t *testing.T) {
	const (
		archiveBucket, billBucket = "cost-pipeline", "payer-cur"
		childARN                  = "arn:aws:iam::111122223333:role/kubecost-report"
		parentARN                 = "arn:aws:iam::222222222222:role/pipeline-reader"
		billRoleARN               = "arn:aws:iam::999999999999:role/cur-reader"
		token                     = "eyJhbGciOiJSUzI1NiJ9.projected-sa-token.bill"
	)
	m := miniotest.Start(t)
	m.CreateBucket(t, archiveBucket)
	m.CreateBucket(t, billBucket)
	m.AddUser(t, "pipeline-reader", "pipeline-reader-secret-1", readPolicy(archiveBucket))
	m.AddUser(t, "cur-reader", "cur-reader-secret-2", readPolicy(billBucket))
	fake := awsfake.Start(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	fake.AllowWebIdentity(childARN, token)
	fake.AllowAssumeRole(childARN, parentARN, awsfake.MinIOIssuer(m.Endpoint, m.Region, "pipeline-reader", "pipeline-reader-secret-1"))
	fake.AllowAssumeRole(childARN, billRoleARN, awsfake.MinIOIssuer(m.Endpoint, m.Region, "cur-reader", "cur-reader-secret-2"))

	admin := m.S3Client(t)
	upload(t, admin, archiveBucket, "", archive(t))
	sim := kubecostsim.New(kubecostsim.Config{Seed: 7, RetentionDays: 15, Now: func() time.Time { return now }})
	upload(t, admin, billBucket, "billing/", billExport(t, sim))

	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(k, "")
	}
	env := map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ROLE_ARN": childARN, "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile,
		"AWS_ENDPOINT_URL_STS": fake.STSURL, "AWS_ENDPOINT_URL_S3": m.Endpoint, "IRSA_PARENT_IAM_ROLE_ARN": parentARN,
	}
	page := makeReport(t, env, "-bucket", archiveBucket, "-bill", "s3://"+billBucket+"/billing/", "-bill-role-arn", billRoleARN)
	if len(billRows(page)) == 0 {
		t.Error("the report read no bill rows with BILL_ROLE_ARN")
	}
	var parent, bill int
	for _, c := range fake.CallsTo("AssumeRole") {
		switch {
		case c.ErrorCode != "":
			t.Errorf("AssumeRole %s refused: %s", c.RoleARN, c.ErrorCode)
		case c.RoleARN == parentARN:
			parent++
		case c.RoleARN == billRoleARN:
			bill++
		}
	}
	if parent == 0 || bill == 0 {
		t.Errorf("AssumeRole: %d for the archive's parent role, %d for BILL_ROLE_ARN; want both", parent, bill)
	}

	// Without BILL_ROLE_ARN the bill is read with the archive's identity,
	// loaded once (one web identity call; a second identity would make a
	// second one), which the payer's bucket refuses.
	webBefore := len(fake.CallsTo("AssumeRoleWithWebIdentity"))
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"report", "-bucket", archiveBucket, "-bill", "s3://" + billBucket + "/billing/",
		"-today", "2026-11-21", "-o", out}, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stdout, &stderr)
	if code != cli.ExitRuntime || !strings.Contains(stderr.String(), "the bill at s3://"+billBucket+"/billing/") ||
		!strings.Contains(stderr.String(), "AccessDenied") {
		t.Errorf("without BILL_ROLE_ARN: exit %d, %s; want the bill refused to the archive's credentials", code, stderr.String())
	}
	if n := len(fake.CallsTo("AssumeRoleWithWebIdentity")) - webBefore; n != 1 {
		t.Errorf("without BILL_ROLE_ARN the report loaded %d identities; want the archive's one, shared", n)
	}
}

// upload copies the files under dir into bucket under prefix.
func upload(t *testing.T, c *s3.Client, bucket, prefix, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		_, err = c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + filepath.ToSlash(rel)), Body: bytes.NewReader(b)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
