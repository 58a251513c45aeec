package bench

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// minioRegion is the region MinIO reports by default; clients sign with it.
const minioRegion = miniotest.Region

// minio is a throw-away MinIO server on a random loopback port; the
// process is miniotest's, shared with the test suites.
type minio struct {
	*miniotest.Server
	client *s3.Client
}

// startMinIO launches bin with its data under dir and waits until it is live.
func startMinIO(ctx context.Context, bin, dir string) (*minio, error) {
	srv, err := miniotest.Launch(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	return &minio{Server: srv, client: s3.New(s3.Options{Region: minioRegion, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")})}, nil
}

// Env is the exporter's S3 configuration for bucket on this server.
func (m *minio) Env(bucket string) []string {
	return []string{
		"S3_BUCKET_NAME=" + bucket,
		"AWS_ENDPOINT_URL_S3=" + m.Endpoint,
		"AWS_ACCESS_KEY_ID=" + m.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + m.SecretKey,
		"AWS_REGION=" + minioRegion,
		"AWS_EC2_METADATA_DISABLED=true",
		// S3_EXPECTED_BUCKET_OWNER stays at its default (the cluster's
		// account): MinIO accepts the header, so the production path runs.
	}
}

func (m *minio) CreateBucket(ctx context.Context, bucket string) error {
	_, err := m.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	return err
}

// object is one stored object and the row count the exporter put in its metadata.
type object struct {
	Key  string
	Size int64
	Rows int64
}

// Objects lists the bucket with each object's "rows" metadata.
func (m *minio) Objects(ctx context.Context, bucket string) ([]object, error) {
	var out []object
	p := s3.NewListObjectsV2Paginator(m.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			h, err := m.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				return nil, err
			}
			rows, _ := strconv.ParseInt(h.Metadata["rows"], 10, 64)
			out = append(out, object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), Rows: rows})
		}
	}
	return out, nil
}

// Empty deletes every object, so the next run finds its days missing again.
func (m *minio) Empty(ctx context.Context, bucket string) error {
	objs, err := m.Objects(ctx, bucket)
	if err != nil || len(objs) == 0 {
		return err
	}
	ids := make([]types.ObjectIdentifier, len(objs))
	for i, o := range objs {
		ids[i] = types.ObjectIdentifier{Key: aws.String(o.Key)}
	}
	_, err = m.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket),
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	return err
}
