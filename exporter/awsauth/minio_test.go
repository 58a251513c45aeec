package awsauth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/awsfake"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

const (
	bucket         = "cost-pipeline"
	clusterAccount = "111111111111" // from CLUSTER_ID: keys are partitioned by the cluster's account
	writerUser     = "pipeline-writer"
	writerSecret   = "pipeline-writer-secret-8c1f0e"
)

// writerPolicy is the parent role's policy from terraform/modules/exporter.
func writerPolicy(prefix, account, region, cluster string) string {
	return awsfake.WriterPolicy(bucket, prefix, account, region, cluster)
}

// wildcardPolicy is the shape first sketched for that policy, with "*" for
// the year, month and codec. IAM's "*" also matches "/", which is why the
// module does not use it (see TestWildcardPolicyAdmitsSmuggledFileNames).
func wildcardPolicy(account, region, cluster string) string {
	return `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Action":["s3:PutObject"],
	   "Resource":["arn:aws:s3:::` + bucket + `/account_id=` + account + `/region=` + region + `/year=*/month=*/????-??-??_` + cluster + `.*.parquet"]},
	  {"Effect":"Allow","Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::` + bucket + `"]}]}`
}

// pipeline is MinIO holding the central bucket, a MinIO user whose policy
// is the parent role's, and the fake STS handing out that user's sessions
// when the IRSA child assumes the parent. S3 goes through the gate, so the
// fake's credential expiry is enforced on S3 requests too.
type pipeline struct {
	*irsa
	minio *miniotest.Server
	gate  *awsfake.S3Gate
}

func newPipeline(t *testing.T) *pipeline {
	t.Helper()
	srv := miniotest.Start(t)
	srv.CreateBucket(t, bucket)
	srv.AddUser(t, writerUser, writerSecret, writerPolicy("", clusterAccount, region, cluster))
	s := newIRSA(t)
	s.fake.AllowAssumeRole(childARN, parentARN, awsfake.MinIOIssuer(srv.Endpoint, srv.Region, writerUser, writerSecret))
	gate := s.fake.S3Gate(t, srv.Endpoint)
	s.env["AWS_ENDPOINT_URL_S3"] = gate.URL
	return &pipeline{irsa: s, minio: srv, gate: gate}
}

// s3Client is the S3 client the exporter's store builds: it must find the
// endpoint Lookup gave (AWS_ENDPOINT_URL_S3) and switch to path style.
func s3Client(id *Identity) *s3.Client { return s3store.ClientConfig{}.New(id.Config) }

var day = time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC)

func put(t *testing.T, c *s3.Client, key string) error {
	t.Helper()
	_, err := c.PutObject(t.Context(), &s3.PutObjectInput{
		Bucket:              aws.String(bucket),
		Key:                 aws.String(key),
		Body:                strings.NewReader("PAR1 not really parquet PAR1"),
		ExpectedBucketOwner: aws.String("222222222222"),
	})
	return err
}

func isCode(err error, code string) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == code
}

func TestParentCredentialsWriteOnlyThisClustersFiles(t *testing.T) {
	t.Parallel()
	p := newPipeline(t)
	log, logs := newLogger(t)
	id, err := Load(t.Context(), p.input(log, parentARN))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	c := s3Client(id)
	own := exporter.Layout{Account: clusterAccount, Region: region, Cluster: cluster}

	for _, codec := range exporter.Codecs() {
		if err := put(t, c, own.Key(day, codec)); err != nil {
			t.Errorf("put this cluster's %s file: %v", codec, err)
		}
	}
	list := func(prefix string) error {
		_, err := c.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{
			Bucket: aws.String(bucket), Prefix: aws.String(prefix), ExpectedBucketOwner: aws.String("222222222222"),
		})
		return err
	}
	if err := list(own.PartitionPrefix()); err != nil {
		t.Errorf("list this account and region's prefix: %v", err)
	}
	for _, prefix := range []string{"", "account_id=333333333333/"} {
		if err := list(prefix); !isCode(err, "AccessDenied") {
			t.Errorf("list %q: err = %v, want AccessDenied", prefix, err)
		}
	}

	other := func(l exporter.Layout) string { return l.Key(day, exporter.Snappy) }
	for name, key := range map[string]string{
		"cluster prod-eu":     other(exporter.Layout{Account: clusterAccount, Region: region, Cluster: "prod-eu"}),
		"cluster eu_prod":     other(exporter.Layout{Account: clusterAccount, Region: region, Cluster: "eu_prod"}),
		"another account":     other(exporter.Layout{Account: "333333333333", Region: region, Cluster: cluster}),
		"another region":      other(exporter.Layout{Account: clusterAccount, Region: "eu-west-1", Cluster: cluster}),
		"under a prefix":      other(exporter.Layout{Prefix: "x/", Account: clusterAccount, Region: region, Cluster: cluster}),
		"not a day file":      own.MonthPrefix(day) + "notes.txt",
		"file name smuggling": own.MonthPrefix(day) + "2024-01-31_prod.x/2024-01-31_eu_prod.snappy.parquet",
	} {
		if err := put(t, c, key); !isCode(err, "AccessDenied") {
			t.Errorf("put %s (%s): err = %v, want AccessDenied from MinIO", name, key, err)
		}
	}

	// Every S3 request was signed by the parent session, none by the child.
	signers := p.gate.Signers()
	if len(signers) == 0 {
		t.Fatal("no S3 request went through the gate")
	}
	for _, k := range signers {
		if role, _ := p.fake.IssuedTo(k); role != parentARN {
			t.Fatalf("an S3 request was signed by %q acting as %q, want the parent %s", k, role, parentARN)
		}
	}
	assertNoSecrets(t, logs.String(), p.secrets(writerSecret))
	if testing.Verbose() {
		t.Logf("captured logs of a chained run:\n%s", logs)
	}
}

// With "*" in the resource, the cluster could write a key whose file name
// is another cluster's (the "*" after "_prod." swallows a "/"), and that
// cluster's planner would take the day as done. The module's fixed-length
// pattern denies it.
func TestWildcardPolicyAdmitsSmuggledFileNames(t *testing.T) {
	t.Parallel()
	srv := miniotest.Start(t)
	srv.CreateBucket(t, bucket)
	srv.AddUser(t, "wildcard", "wildcard-secret-1", wildcardPolicy(clusterAccount, region, cluster))
	srv.AddUser(t, "module", "module-secret-1", writerPolicy("", clusterAccount, region, cluster))
	own := exporter.Layout{Account: clusterAccount, Region: region, Cluster: cluster}
	smuggled := own.MonthPrefix(day) + "2024-01-31_prod.x/2024-01-31_eu_prod.snappy.parquet"
	victim := exporter.Layout{Account: clusterAccount, Region: region, Cluster: "eu_prod"}
	if _, ok := victim.ParseDay(smuggled); !ok {
		t.Fatal("eu_prod's planner would ignore the smuggled key; the test shows nothing")
	}
	if err := put(t, srv.S3ClientAs(t, "wildcard", "wildcard-secret-1"), smuggled); err != nil {
		t.Errorf("the wildcard policy denied the smuggled key (%v); this test's premise is wrong", err)
	}
	if err := put(t, srv.S3ClientAs(t, "module", "module-secret-1"), smuggled); !isCode(err, "AccessDenied") {
		t.Errorf("the module's policy: err = %v, want AccessDenied", err)
	}
	if err := put(t, srv.S3ClientAs(t, "module", "module-secret-1"), own.Key(day, exporter.Zstd)); err != nil {
		t.Errorf("the module's policy denied this cluster's own file: %v", err)
	}
}

// A backfill outlives its credentials. Sessions last one minute of the
// fake's clock, which moves a minute between uploads, so each upload comes
// after the previous session expired; the expiry window (an hour) makes the
// SDK see every cached credential as due. Each upload therefore has both
// the child and the parent session issued again, the rotated token file is
// re-read, and the gate, which rejects expired sessions, never sees one.
// No test time is spent waiting for an expiry.
func TestCredentialsRefreshDuringLongRun(t *testing.T) {
	t.Parallel()
	p := newPipeline(t)
	clock := awsfake.NewManualClock(time.Now())
	p.fake.SetClock(clock.Now)
	p.fake.SetTTL(time.Minute)
	log, logs := newLogger(t)
	in := p.input(log, parentARN)
	in.ExpiryWindow = time.Hour
	id, err := Load(t.Context(), in)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	first, err := id.Config.Credentials.Retrieve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := s3Client(id)
	own := exporter.Layout{Account: clusterAccount, Region: region, Cluster: cluster}

	rotated := "eyJhbGciOiJSUzI1NiJ9.rotated-by-kubelet." + t.Name()
	const uploads = 6
	assumesBefore := len(p.fake.CallsTo("AssumeRole"))
	for i := range uploads {
		clock.Advance(time.Minute) // the session of the previous upload expires
		if i == uploads/2 {        // kubelet rotates the projected token mid-run
			p.fake.AllowWebIdentity(childARN, rotated)
			writeFile(t, p.tokenFile, rotated)
		}
		if err := put(t, c, own.Key(day.AddDate(0, 0, -i), exporter.Snappy)); err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
	}

	t.Logf("%d uploads: %d AssumeRole, %d AssumeRoleWithWebIdentity, %d S3 requests", uploads,
		len(p.fake.CallsTo("AssumeRole")), len(p.fake.CallsTo("AssumeRoleWithWebIdentity")), len(p.gate.Signers()))
	if n := p.gate.Rejected(); n != 0 {
		t.Errorf("%d S3 requests carried expired credentials", n)
	}
	assumes := p.fake.CallsTo("AssumeRole")
	webs := p.fake.CallsTo("AssumeRoleWithWebIdentity")
	if len(assumes)-assumesBefore < uploads || len(webs) < uploads {
		t.Errorf("%d new AssumeRole and %d AssumeRoleWithWebIdentity calls for %d uploads with credentials always due; want a refresh per upload",
			len(assumes)-assumesBefore, len(webs), uploads)
	}
	for _, a := range append(assumes, webs...) {
		if a.ErrorCode != "" {
			t.Errorf("%s failed with %s (an expired child signature?)", a.Action, a.ErrorCode)
		}
	}
	if last := webs[len(webs)-1]; last.WebIdentityToken != rotated {
		t.Errorf("the last web identity call sent the old token; the file must be re-read at refresh")
	}
	if !strings.Contains(logs.String(), `"msg":"aws credentials refreshed","step":"assume-role"`) {
		t.Errorf("no refresh event logged")
	}

	// Control: the gate does reject the first, expired session, so zero
	// rejections above means the refresh worked, not that nothing was checked.
	stale := s3.New(s3.Options{
		Region: region, BaseEndpoint: aws.String(p.gate.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(first.AccessKeyID, first.SecretAccessKey, first.SessionToken),
	})
	if err := put(t, stale, own.Key(day, exporter.Snappy)); !isCode(err, "ExpiredToken") {
		t.Errorf("a put with the first, expired session: err = %v, want ExpiredToken", err)
	}
	assertNoSecrets(t, logs.String(), p.secrets(writerSecret, rotated))
}
