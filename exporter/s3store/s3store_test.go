package s3store

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/storetest"
)

const owner = "123456789012"

// TestAcceptance runs the shared suite against a real MinIO with the
// production defaults (8 MiB parts, 2 at a time), a client built only from
// AWS_ENDPOINT_URL_S3 and friends, and ExpectedBucketOwner set. Every
// request is recorded, so afterwards we can check what went on the wire.
func TestAcceptance(t *testing.T) {
	srv := miniotest.Start(t)
	rec := newRecorder()
	client := minioClient(t, srv, rec)
	admin := srv.S3Client(t) // unrecorded: bucket set-up and inspection

	var n atomic.Int32
	storetest.Run(t, func(t *testing.T) exporter.ObjectStore {
		bucket := fmt.Sprintf("acceptance-%03d", n.Add(1))
		srv.CreateBucket(t, bucket)
		return newStore(t, client, Options{Bucket: bucket, ExpectedBucketOwner: owner})
	}, storetest.WithLeftovers(func(t *testing.T, s exporter.ObjectStore) []string {
		return pendingUploads(t.Context(), t, admin, s.(*Store).opts.Bucket)
	}))

	reqs := rec.requests()
	ops := map[string]int{}
	for _, q := range reqs {
		ops[q.Op]++
		if q.Op == "ListObjectsV2" && q.Query.Has("continuation-token") {
			ops["ListObjectsV2 next page"]++
		}
		if got := q.Header.Get("X-Amz-Expected-Bucket-Owner"); got != owner {
			t.Errorf("%s %s: x-amz-expected-bucket-owner = %q, want %q", q.Op, q.Path, got, owner)
		}
		// Path-style: the bucket is the first path segment, the host is
		// the endpoint as configured.
		if !strings.HasPrefix(q.Path, "/acceptance-") || q.Host != strings.TrimPrefix(srv.Endpoint, "http://") {
			t.Errorf("%s: request to host %q path %q is not path-style", q.Op, q.Host, q.Path)
		}
	}
	t.Logf("requests by operation: %v", ops)
	// The suite must have exercised every code path whose header we check.
	for _, op := range []string{"PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload",
		"AbortMultipartUpload", "GetObject", "ListObjectsV2", "ListObjectsV2 next page", "DeleteObject"} {
		if ops[op] == 0 {
			t.Errorf("the suite sent no %s request", op)
		}
	}
}

// TestChecksumsVerified checks that uploads carry a flexible checksum that
// MinIO verified and stored, for single-part and multipart objects, with
// the default CRC32 and with CRC64NVME.
func TestChecksumsVerified(t *testing.T) {
	srv := miniotest.Start(t)
	rec := newRecorder()
	client := minioClient(t, srv, rec)
	srv.CreateBucket(t, "sums")
	for _, algo := range []types.ChecksumAlgorithm{"", types.ChecksumAlgorithmCrc64nvme} {
		s := newStore(t, client, Options{Bucket: "sums", Checksum: algo, PartSize: 5 << 20})
		want := s.opts.Checksum
		for _, size := range []int{1 << 10, 11 << 20} {
			key := fmt.Sprintf("%s/%d", want, size)
			if err := s.Put(t.Context(), key, pipe(size), nil, exporter.Precondition{}); err != nil {
				t.Fatalf("%s: Put %d bytes: %v", want, size, err)
			}
			head, err := srv.S3Client(t).HeadObject(t.Context(), &s3.HeadObjectInput{
				Bucket: aws.String("sums"), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled,
			})
			if err != nil {
				t.Fatal(err)
			}
			got := map[types.ChecksumAlgorithm]*string{
				types.ChecksumAlgorithmCrc32:     head.ChecksumCRC32,
				types.ChecksumAlgorithmCrc64nvme: head.ChecksumCRC64NVME,
			}[want]
			if got == nil {
				t.Errorf("%s, %d bytes: MinIO stored no %s checksum", key, size, want)
			}
			t.Logf("%s: stored checksum %s type %s", key, aws.ToString(got), head.ChecksumType)
			b := readAll(t, s, key)
			if len(b) != size {
				t.Errorf("%s: read back %d bytes", key, len(b))
			}
		}
	}
	for _, q := range rec.requests() {
		if (q.Op == "PutObject" || q.Op == "UploadPart") && q.Header.Get("X-Amz-Sdk-Checksum-Algorithm") == "" {
			t.Errorf("%s %s sent without a flexible checksum", q.Op, q.Path)
		}
	}
}

// TestMetadataAndContentType checks that Put's metadata map becomes user
// metadata, on the single-part and the multipart path.
func TestMetadataAndContentType(t *testing.T) {
	srv := miniotest.Start(t)
	client := minioClient(t, srv, nil)
	srv.CreateBucket(t, "meta")
	s := newStore(t, client, Options{Bucket: "meta", PartSize: 5 << 20})
	meta := map[string]string{"rows": "42", "exporter-version": "1.2.3", "day": "2026-03-01"}
	for _, size := range []int{100, 12 << 20} {
		key := fmt.Sprintf("k%d", size)
		if err := s.Put(t.Context(), key, pipe(size), meta, exporter.Precondition{}); err != nil {
			t.Fatal(err)
		}
		head, err := srv.S3Client(t).HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("meta"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range meta {
			if head.Metadata[k] != v {
				t.Errorf("%s: metadata %s = %q, want %q (all: %v)", key, k, head.Metadata[k], v, head.Metadata)
			}
		}
		if got := aws.ToString(head.ContentType); got != DefaultContentType {
			t.Errorf("%s: Content-Type %q, want %q", key, got, DefaultContentType)
		}
	}
	// A bad key, a value that is not ASCII and metadata over 2 KiB are
	// refused at configuration time, where the user writes metadata
	// (destination's TestRefused); the store trusts its caller.
}

// TestServerSideEncryption runs MinIO with a static KMS key (its SSE needs
// one) and checks that the SSE headers are sent and honoured.
func TestServerSideEncryption(t *testing.T) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	t.Setenv("MINIO_KMS_SECRET_KEY", "test-key:"+base64.StdEncoding.EncodeToString(key)) // inherited by the MinIO process
	srv := miniotest.Start(t)
	rec := newRecorder()
	client := minioClient(t, srv, rec)
	srv.CreateBucket(t, "sse")

	for _, tc := range []struct{ sse, kmsKey string }{{SSES3, ""}, {SSEKMS, "test-key"}} {
		s := newStore(t, client, Options{Bucket: "sse", SSE: tc.sse, SSEKMSKeyID: tc.kmsKey, PartSize: 5 << 20})
		for _, size := range []int{100, 11 << 20} {
			k := fmt.Sprintf("%s/%d", tc.sse, size)
			if err := s.Put(t.Context(), k, pipe(size), nil, exporter.Precondition{}); err != nil {
				t.Fatalf("Put with SSE %s: %v", tc.sse, err)
			}
			head, err := srv.S3Client(t).HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("sse"), Key: aws.String(k)})
			if err != nil {
				t.Fatal(err)
			}
			if string(head.ServerSideEncryption) != tc.sse {
				t.Errorf("%s: stored with SSE %q, want %q", k, head.ServerSideEncryption, tc.sse)
			}
			if len(readAll(t, s, k)) != size {
				t.Errorf("%s: wrong size read back", k)
			}
		}
	}
	for _, q := range rec.requests() {
		if q.Op != "PutObject" && q.Op != "CreateMultipartUpload" {
			continue
		}
		if q.Header.Get("X-Amz-Server-Side-Encryption") == "" {
			t.Errorf("%s %s sent without x-amz-server-side-encryption", q.Op, q.Path)
		}
		if strings.HasPrefix(q.Path, "/sse/aws:kms") && q.Header.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id") != "test-key" {
			t.Errorf("%s %s sent without the KMS key ID", q.Op, q.Path)
		}
	}
}

// TestWrongBucketOwner records what MinIO does with a wrong
// ExpectedBucketOwner. AWS answers 403 AccessDenied; MinIO ignores the
// header, which this test documents rather than hides. The header itself
// is asserted on every request in TestAcceptance.
func TestWrongBucketOwner(t *testing.T) {
	srv := miniotest.Start(t)
	client := minioClient(t, srv, nil)
	srv.CreateBucket(t, "owned")
	s := newStore(t, client, Options{Bucket: "owned", ExpectedBucketOwner: "999999999999"})
	err := s.Put(t.Context(), "k", pipe(10), nil, exporter.Precondition{})
	switch apiCode(err) {
	case "AccessDenied":
		t.Log("MinIO enforces x-amz-expected-bucket-owner")
	default:
		if err != nil {
			t.Fatalf("Put with a wrong owner failed in an unexpected way: %v", err)
		}
		t.Log("MinIO ignores x-amz-expected-bucket-owner (AWS S3 would answer 403); only the header is checked")
	}
}

// TestPutMemoryBounded streams objects of 50 and 160 MiB through Put with
// the default options and checks that the heap does not grow with the
// object: a stream is cut into a few pooled part buffers, never held whole.
func TestPutMemoryBounded(t *testing.T) {
	srv := miniotest.Start(t)
	client := minioClient(t, srv, nil)
	srv.CreateBucket(t, "mem")
	s := newStore(t, client, Options{Bucket: "mem"})

	var allocs []uint64
	sizes := []int{50 << 20, 160 << 20}
	for _, size := range sizes {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := sampleHeap(t)
		if err := s.Put(t.Context(), "big", pipe(size), nil, exporter.Precondition{}); err != nil {
			t.Fatal(err)
		}
		heapPeak := peak()
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		allocs = append(allocs, allocated)
		grew := heapPeak - min(heapPeak, before.HeapAlloc)
		t.Logf("%d MiB Put (PartSize %d MiB, Concurrency %d): heap peak +%.1f MiB (live and not yet collected), %.1f MiB allocated in total",
			size>>20, testPartSize>>20, DefaultConcurrency, mib(grew), mib(allocated))
		// Concurrency+1 pooled part buffers plus the SDK's own working set
		// (the checksum pass, request buffers). None of it depends on the object's size.
		limit := uint64(DefaultConcurrency+4)*uint64(testPartSize) + 16<<20
		if grew > limit {
			t.Errorf("%d MiB Put: heap peak grew by %.1f MiB, want at most %.1f MiB", size>>20, mib(grew), mib(limit))
		}
	}
	// Total allocation is GC-independent: it must not grow with the body
	// (the race detector inflates both runs alike).
	if extra := allocs[1] - min(allocs[1], allocs[0]); extra > 16<<20 {
		t.Errorf("a %d MiB Put allocated %.1f MiB more than a %d MiB one: buffers scale with the object",
			sizes[1]>>20, mib(extra), sizes[0]>>20)
	}
}

// sampleHeap polls the live heap every millisecond until the returned
// function is called, which returns the highest value seen.
func sampleHeap(t *testing.T) (stop func() uint64) {
	t.Helper()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// pipe returns size bytes through a real io.Pipe, like the Parquet encoder.
func pipe(size int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		chunk := bytes.Repeat([]byte("kubecost"), 4096)
		for left := size; left > 0; {
			n := min(left, len(chunk))
			if _, err := pw.Write(chunk[:n]); err != nil {
				return
			}
			left -= n
		}
		pw.Close()
	}()
	return pr
}

func readAll(t *testing.T, s *Store, key string) []byte {
	t.Helper()
	rc, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}
