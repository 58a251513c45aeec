package s3store

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// OpenRange returns n bytes of key from off: GetObject with
// Range: bytes=off-(off+n-1) (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html;
// S3 serves one range per request). With etag, If-Match makes S3 refuse
// (412) a replaced object, so one read never mixes two versions. No
// checksum is asked for: S3 has none for part of an object.
func (s *Store) OpenRange(ctx context.Context, key, etag string, off, n int64) (io.ReadCloser, error) {
	if off < 0 || n <= 0 {
		return nil, fmt.Errorf("s3: open %s: range of %d bytes at %d", key, n, off)
	}
	in := &s3.GetObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
		Range:               aws.String("bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10)),
	}
	if etag != "" {
		in.IfMatch = aws.String(etag)
	}
	return s.get(ctx, key, in)
}

var _ exporter.RangeOpener = (*Store)(nil)
