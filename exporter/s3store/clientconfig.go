package s3store

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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

// New builds the S3 client like NewClient, with cc applied. optFns run
// first, as in NewClient.
func (cc ClientConfig) New(awsCfg aws.Config, optFns ...func(*s3.Options)) *s3.Client {
	fns := append([]func(*s3.Options){}, optFns...)
	fns = append(fns, func(o *s3.Options) {
		if cc.Region != "" {
			o.Region = cc.Region
		}
		if cc.HTTPClient != nil {
			o.HTTPClient = cc.HTTPClient
		}
		if cc.MaxAttempts > 0 {
			o.RetryMaxAttempts = cc.MaxAttempts
		}
	})
	fns = append(fns, func(o *s3.Options) {
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
	})
	return s3.NewFromConfig(awsCfg, fns...)
}
