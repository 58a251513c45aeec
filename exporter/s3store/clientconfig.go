package s3store

import (
	"context"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

// Addressing selects how the bucket is named in requests.
type Addressing int

// Addressing modes. AddressingAuto is path-style exactly with a custom endpoint (CONTRACT
// §1); the others are a Thanos configuration's bucket_lookup_type.
const (
	AddressingAuto Addressing = iota
	AddressingPath
	AddressingVirtualHosted
)

// ClientConfig is what a destination says about the S3 client beyond the shared aws.Config
// (a Thanos configuration's region, addressing, TLS, retries); zero changes nothing.
type ClientConfig struct {
	Region string // the bucket's; "" keeps aws.Config's
	// No endpoint: the SDK resolves it from aws.Config, whose variables awsauth answers.
	Addressing Addressing
	// HTTPClient replaces aws.Config's, for this endpoint's TLS settings alone.
	HTTPClient aws.HTTPClient
	// MaxAttempts is per call; 0 keeps the SDK's (AWS_MAX_ATTEMPTS, default 3).
	MaxAttempts int
}

// New builds a Store's S3 client from a config.LoadDefaultConfig aws.Config with cc applied;
// optFns run first, so callers may set BaseEndpoint.
//
// The SDK resolves AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL and the shared config's
// endpoint_url into Options.BaseEndpoint, so AddressingAuto reads that, not the environment.
//
// Retries are the SDK's standard retryer's (AWS_MAX_ATTEMPTS and AWS_RETRY_MODE apply): it
// knows S3's throttling and transient codes, repeats only what is safe, rewinds the seekable
// part bodies and honours ctx. A loop of our own would multiply attempts and delays.
func (cc ClientConfig) New(awsCfg aws.Config, optFns ...func(*s3.Options)) *s3.Client {
	return s3.NewFromConfig(awsCfg, append(slices.Clone(optFns), func(o *s3.Options) {
		if cc.Region != "" {
			o.Region = cc.Region
		}
		if cc.HTTPClient != nil {
			o.HTTPClient = cc.HTTPClient
		}
		if cc.MaxAttempts > 0 {
			o.RetryMaxAttempts = cc.MaxAttempts
		}
		switch cc.Addressing {
		case AddressingPath:
			o.UsePathStyle = true
		case AddressingVirtualHosted:
			o.UsePathStyle = false
		default:
			// MinIO, Ceph and friends rarely have virtual-hosted wildcard DNS and certificates.
			if o.BaseEndpoint != nil && *o.BaseEndpoint != "" {
				o.UsePathStyle = true
			}
		}
		if o.Retryer == nil && o.RetryMode == "" {
			o.RetryMode = aws.RetryModeStandard
		}
	})...)
}

// withExpectedBucketOwner fills ExpectedBucketOwner into every request that leaves it
// empty: a safety net for a call that does not set it, such as one added later.
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

// ownerField points at an S3 input's ExpectedBucketOwner field, nil for a type without it.
func ownerField(params any) **string {
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f, ok := v.Elem().Type().FieldByName("ExpectedBucketOwner")
	if !ok || f.Type != reflect.TypeFor[*string]() {
		return nil
	}
	return v.Elem().FieldByIndex(f.Index).Addr().Interface().(**string)
}
