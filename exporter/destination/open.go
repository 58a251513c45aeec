package destination

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/awsauth"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
)

// Env is what the running command adds to the settings: who it is, not where the archive is.
type Env struct {
	// Lookup is the environment, for the AWS variables awsauth reads.
	Lookup func(string) (string, bool)
	// Session names the STS sessions (the cluster's name, or "report").
	Session string
	// Home is the bucket owner when no setting says (the cluster's); "" sends none.
	Home string
	// AWS loads the credentials even for a directory: the run reads Kubecost secrets.
	AWS bool
	// Shared is an identity already loaded (the archive's), for a location with no role or
	// keys of its own (the bill's without BILL_ROLE_ARN).
	Shared *awsauth.Identity
	// ReadOnly opens an existing directory only, so a typo does not read as an empty archive.
	ReadOnly bool
	Logger   *slog.Logger
}

// Archive is an opened destination.
type Archive struct {
	Store exporter.ObjectStore
	// AWS is the run's AWS identity; nil when nothing needed one.
	AWS *awsauth.Identity
}

// Open opens the archive the settings name. AWS is touched only when needed, so a
// directory works without credentials.
func Open(ctx context.Context, s *Settings, e Env) (*Archive, error) {
	a := &Archive{}
	var err error
	switch {
	case s.IsDir() && !e.AWS:
	case e.Shared != nil && s.IRSAParentRoleARN == "" && s.store.file == nil:
		a.AWS = e.Shared
	default:
		if a.AWS, err = awsauth.Load(ctx, s.awsInput(e)); err != nil {
			return nil, err
		}
	}
	if s.IsDir() {
		if e.ReadOnly {
			if st, serr := os.Stat(s.OutputDir); serr != nil || !st.IsDir() {
				return nil, fmt.Errorf("%s: no such directory", s.OutputDir)
			}
		}
		a.Store, err = dirstore.New(s.OutputDir, dirstore.Options{Logger: e.Logger})
	} else {
		a.Store, err = s.openS3(e, a.AWS)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (s *Settings) openS3(e Env, id *awsauth.Identity) (*s3store.Store, error) {
	return s3store.New(s.s3Client(id), s3store.Options{
		Bucket: s.S3BucketName, ExpectedBucketOwner: s.BucketOwner(e.Home),
		SSE: s.SSE, SSEKMSKeyID: s.SSEKMSKeyID, Headers: s.objectHeaders(), Logger: e.Logger,
		PartSize: s.PartSizeBytes(),
	})
}

// awsInput is the credential chain: IRSA (or the file's static keys), then the parent
// role; the file's endpoints reach the SDK through the lookup.
func (s *Settings) awsInput(e Env) awsauth.Input {
	in := awsauth.Input{
		Region: s.STSRegion(), ParentRoleARN: s.IRSAParentRoleARN, ParentRoleSetting: cmp.Or(s.roleVar, "IRSA_PARENT_IAM_ROLE_ARN"), ClusterName: e.Session,
		Lookup: s.AWSLookup(e.Lookup), Logger: e.Logger,
		RequestTimeout: s.RequestTimeout.Duration(), RequestTimeoutSetting: timeoutVar,
	}
	if f := s.store.file; f != nil {
		if ak, sk, token, ok := f.StaticKeys(); ok {
			in.Static = &aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, SessionToken: token, Source: "OBJECT_STORE_CONFIG_FILE"}
		}
	}
	return in
}

// s3Client is the run's AWS configuration with the bucket's region, addressing and TLS.
func (s *Settings) s3Client(id *awsauth.Identity) *s3.Client {
	cc := s3store.ClientConfig{Region: s.BucketRegion(), MaxAttempts: s.maxAttempts()}
	if f := s.store.file; f != nil && f.IsS3() {
		cc.Addressing = map[LookupType]s3store.Addressing{LookupPath: s3store.AddressingPath, LookupVirtualHosted: s3store.AddressingVirtualHosted}[f.Addressing()]
	}
	if t := s.store.tls; t != nil {
		// STS and Secrets Manager keep the system's roots.
		cc.HTTPClient = awsauth.NewHTTPClient(s.RequestTimeout.Duration(), timeoutVar).
			WithTransportOptions(func(tr *http.Transport) { tr.TLSClientConfig = t.Clone() })
	}
	if _, msg := exporter.ParseAccessPointARN(s.S3BucketName); msg == "" {
		// The SDK refuses path-style with an ARN, and an ARN of another region than the
		// client's unless UseARNRegion (AWS_S3_USE_ARN_REGION; service/s3 endpoints.go
		// bindEndpointParams; endpoints_test.go "vanilla access point arn with region
		// mismatch and UseArnRegion=false"); BucketRegion is the ARN's, so neither bites.
		cc.Addressing = s3store.AddressingVirtualHosted
	}
	return cc.New(id.Config)
}

// objectHeaders are the file's put_user_metadata and KMS encryption context.
func (s *Settings) objectHeaders() s3store.ObjectHeaders {
	f := s.store.file
	if f == nil || !f.IsS3() {
		return s3store.ObjectHeaders{}
	}
	h := f.Headers()
	h.SSEKMSEncryptionContext = f.KMSContext()
	return h
}
