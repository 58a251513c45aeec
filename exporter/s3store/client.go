package s3store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

// NewClient builds the S3 client for a Store from an aws.Config loaded with
// config.LoadDefaultConfig. optFns run before the rules below, so callers
// may set BaseEndpoint themselves.
//
// Custom endpoints: the SDK itself resolves AWS_ENDPOINT_URL_S3,
// AWS_ENDPOINT_URL and the shared config file's endpoint_url into
// Options.BaseEndpoint, so we look at the resolved value rather than at the
// environment. Whenever one is set we switch to path-style addressing
// (CONTRACT §1): MinIO, Ceph and friends rarely have the wildcard DNS and
// certificates that virtual-hosted bucket names need.
//
// Retries: we keep the SDK's standard retryer (AWS_MAX_ATTEMPTS and
// AWS_RETRY_MODE still apply). It knows S3's throttling and transient error
// codes, retries only what is safe to repeat, rewinds the seekable part
// part bodies (file sections, buffers) and honours ctx, so the store adds no retry
// loop of its own; two nested loops would multiply attempts and delays.
func NewClient(awsCfg aws.Config, optFns ...func(*s3.Options)) *s3.Client {
	return ClientConfig{}.New(awsCfg, optFns...)
}

// withExpectedBucketOwner fills ExpectedBucketOwner into every request
// that has the field and leaves it empty. The store sets the field itself
// on the calls it builds; this is the safety net for any call that does
// not, such as one added later.
func withExpectedBucketOwner(owner string) func(*s3.Options) {
	mw := middleware.InitializeMiddlewareFunc("kse.ExpectedBucketOwner", func(
		ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler,
	) (middleware.InitializeOutput, middleware.Metadata, error) {
		if f := ownerField(in.Parameters); f != nil && *f == nil {
			*f = aws.String(owner)
		}
		return next.HandleInitialize(ctx, in)
	})
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(mw, middleware.Before)
		})
	}
}

// ownerField points at the ExpectedBucketOwner field of every input type
// the store sends.
func ownerField(params any) **string {
	switch in := params.(type) {
	case *s3.ListObjectsV2Input:
		return &in.ExpectedBucketOwner
	case *s3.PutObjectInput:
		return &in.ExpectedBucketOwner
	case *s3.CreateMultipartUploadInput:
		return &in.ExpectedBucketOwner
	case *s3.UploadPartInput:
		return &in.ExpectedBucketOwner
	case *s3.CompleteMultipartUploadInput:
		return &in.ExpectedBucketOwner
	case *s3.AbortMultipartUploadInput:
		return &in.ExpectedBucketOwner
	case *s3.GetObjectInput:
		return &in.ExpectedBucketOwner
	case *s3.HeadObjectInput:
		return &in.ExpectedBucketOwner
	case *s3.DeleteObjectInput:
		return &in.ExpectedBucketOwner
	case *s3.ListMultipartUploadsInput:
		return &in.ExpectedBucketOwner
	}
	return nil
}
