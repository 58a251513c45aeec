package awsfake

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// minioMinDuration is the shortest session MinIO's STS grants.
const minioMinDuration = 15 * time.Minute

// MinIOIssuer mints parent credentials through MinIO's own STS AssumeRole,
// signed with a MinIO user's long-term keys. The result carries a real
// session token that MinIO validates on every S3 request, and inherits
// that user's policy, so the exporter's S3 calls are authorised exactly as
// the user's policy says, with a session token on the wire as on AWS.
//
// MinIO will not grant less than 15 minutes; the fake still reports its
// own, shorter TTL to the client, and an S3Gate enforces that one.
func MinIOIssuer(endpoint, region, accessKey, secretKey string) Issuer {
	client := sts.New(sts.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
	})
	return func(ctx context.Context, sessionName string, ttl time.Duration) (Credentials, error) {
		d := max(ttl, minioMinDuration)
		out, err := client.AssumeRole(ctx, &sts.AssumeRoleInput{
			// MinIO ignores the role for user-signed AssumeRole: the session
			// acts as the signing user. The SDK insists on some value.
			RoleArn:         aws.String("arn:minio:iam:::role/kubecost-s3-exporter"),
			RoleSessionName: aws.String(sessionName),
			DurationSeconds: aws.Int32(int32(d / time.Second)),
		})
		if err != nil {
			return Credentials{}, fmt.Errorf("minio sts: %w", err)
		}
		c := out.Credentials
		return Credentials{
			AccessKeyID:     aws.ToString(c.AccessKeyId),
			SecretAccessKey: aws.ToString(c.SecretAccessKey),
			SessionToken:    aws.ToString(c.SessionToken),
		}, nil
	}
}
