package s3store

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// TestObjectHeaders: Options.Headers go on every object, single PutObject
// and multipart alike; user metadata is stored next to the Put's own,
// which wins a collision.
func TestObjectHeaders(t *testing.T) {
	srv := miniotest.Start(t)
	rec := newRecorder()
	client := minioClient(t, srv, rec)
	srv.CreateBucket(t, "headers")
	s := newStore(t, client, Options{Bucket: "headers", PartSize: 5 << 20, Headers: ObjectHeaders{
		ACL: "bucket-owner-full-control", CacheControl: "no-cache", StorageClass: "STANDARD",
		Metadata: map[string]string{"team": "finops", "rows": "from-the-file"},
	}})
	for _, size := range []int{100, 11 << 20} {
		key := fmt.Sprintf("k%d", size)
		if err := s.Put(t.Context(), key, pipe(size), map[string]string{"rows": "42"}, exporter.Precondition{}); err != nil {
			t.Fatal(err)
		}
		head, err := srv.S3Client(t).HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("headers"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if head.Metadata["team"] != "finops" || head.Metadata["rows"] != "42" || aws.ToString(head.CacheControl) != "no-cache" {
			t.Errorf("%s: metadata %v, Cache-Control %q", key, head.Metadata, aws.ToString(head.CacheControl))
		}
	}
	writes := 0
	for _, q := range rec.requests() {
		if q.Op != "PutObject" && q.Op != "CreateMultipartUpload" {
			continue
		}
		writes++
		if q.Header.Get("X-Amz-Acl") != "bucket-owner-full-control" || q.Header.Get("X-Amz-Storage-Class") != "STANDARD" {
			t.Errorf("%s %s: X-Amz-Acl %q, X-Amz-Storage-Class %q", q.Op, q.Path, q.Header.Get("X-Amz-Acl"), q.Header.Get("X-Amz-Storage-Class"))
		}
	}
	if writes != 2 {
		t.Errorf("%d write requests, want a PutObject and a CreateMultipartUpload", writes)
	}
}
