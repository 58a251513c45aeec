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

// Addressing modes. AddressingAuto is path-style exactly when a custom
// endpoint is set (CONTRACT §1); the others are a bucket_lookup_type from
// a Thanos object storage configuration.
const (
	AddressingAuto Addressing = iota
	AddressingPath
	AddressingVirtualHosted
)

// ClientConfig is what a destination may say about the S3 client itself,
// beyond the shared aws.Config: a Thanos object storage configuration
// names the bucket's region, its addressing, its TLS settings and its
// retry count. The zero value changes nothing.
type ClientConfig struct {
	// Region of the bucket; "" keeps aws.Config's.
	Region string
	// The endpoint is the one the SDK resolves from aws.Config (awsauth
	// answers its endpoint variables), never set here.
	Addressing Addressing
	// HTTPClient replaces aws.Config's, for TLS settings of this endpoint
	// alone; nil keeps it.
	HTTPClient aws.HTTPClient
	// MaxAttempts is the retryer's attempts per call; 0 keeps the SDK's
	// (AWS_MAX_ATTEMPTS, default 3).
	MaxAttempts int
}

// New builds the S3 client for a Store from an aws.Config loaded with
// config.LoadDefaultConfig, with cc applied. optFns run before the rules
// below, so callers may set BaseEndpoint themselves.
//
// Custom endpoints: the SDK itself resolves AWS_ENDPOINT_URL_S3,
// AWS_ENDPOINT_URL and the shared config file's endpoint_url into
// Options.BaseEndpoint, so we look at the resolved value rather than at the
// environment. With AddressingAuto, whenever one is set we switch to
// path-style addressing (CONTRACT §1).
//
// Retries: we keep the SDK's standard retryer (AWS_MAX_ATTEMPTS and
// AWS_RETRY_MODE still apply). It knows S3's throttling and transient error
// codes, retries only what is safe to repeat, rewinds the seekable part
// bodies (file sections, buffers) and honours ctx, so the store adds no retry
// loop of its own; two nested loops would multiply attempts and delays.
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
			// MinIO, Ceph and friends rarely have the wildcard DNS and
			// certificates that virtual-hosted bucket names need.
			if o.BaseEndpoint != nil && *o.BaseEndpoint != "" {
				o.UsePathStyle = true
			}
		}
		if o.Retryer == nil && o.RetryMode == "" {
			o.RetryMode = aws.RetryModeStandard
		}
	})...)
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

// ownerField points at the ExpectedBucketOwner field of an S3 input (every
// input the store sends has one), nil for a type without it.
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
