package bill_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/bytecount"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// TestReadFromS3FetchesRanges reads a two-week export from MinIO through
// a proxy that counts what the reader GETs: every object GET asks for a
// range, nothing is spooled, the whole export costs at most its size, and
// three days cost well under half of it (the footer and those days' row
// groups), with the same sums as the file read from a directory.
func TestReadFromS3FetchesRanges(t *testing.T) {
	srv := miniotest.Start(t)
	srv.CreateBucket(t, "billing")
	dir := t.TempDir()
	key := "cur/" + curfixture.Export + "/data/BILLING_PERIOD=2026-03/" + curfixture.Export + "-00001.snappy.parquet"
	path := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s := curfixture.Synthetic{Clusters: 4, PodsPerCluster: 100, Days: 14, Start: synthStart, RowGroupRows: 5000}
	if _, err := curfixture.WriteSynthetic(&buf, s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	direct, err := s3store.New(srv.S3Client(t), s3store.Options{Bucket: "billing", PartSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := direct.Put(ctx, key, bytes.NewReader(buf.Bytes()), nil, exporter.Precondition{}); err != nil {
		t.Fatal(err)
	}
	proxy, err := bytecount.Start(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	client := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(proxy.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")})
	store, err := s3store.New(client, s3store.Options{Bucket: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	local, err := dirstore.New(dir, dirstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	from, to := synthStart.AddDate(0, 0, 5), synthStart.AddDate(0, 0, 7)
	for _, c := range []struct {
		name     string
		from, to time.Time
		most     int64 // bytes
	}{{"whole", time.Time{}, time.Time{}, size}, {"three days", from, to, size / 2}} {
		proxy.GETs.Store(0)
		proxy.Ranged.Store(0)
		proxy.Bytes.Store(0)
		tmp := t.TempDir()
		got, err := bill.Read(ctx, bill.Options{Store: store, Prefix: "cur/", From: c.from, To: c.to, TempDir: tmp})
		if err != nil {
			t.Fatal(err)
		}
		want, err := bill.Read(ctx, bill.Options{Store: local, Prefix: "cur/", From: c.from, To: c.to})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) == 0 || len(got.Rows) != len(want.Rows) {
			t.Fatalf("%s: %d keys from S3, %d from the directory", c.name, len(got.Rows), len(want.Rows))
		}
		for k, w := range want.Rows {
			if g := got.Rows[k]; g == nil || !curcheck.SameCosts(g, w) {
				t.Errorf("%s: %+v from S3 %+v, from the directory %+v", c.name, k, g, w)
			}
		}
		gets, ranged, fetched := proxy.GETs.Load(), proxy.Ranged.Load(), proxy.Bytes.Load()
		t.Logf("%s: %d GETs (%d ranged), %d of %d bytes", c.name, gets, ranged, fetched, size)
		if gets == 0 || gets != ranged || fetched == 0 || fetched > c.most || got.Stats.BytesSpooled != 0 {
			t.Errorf("%s: %d GETs, %d ranged, %d bytes fetched (at most %d), %d spooled", c.name, gets, ranged, fetched, c.most, got.Stats.BytesSpooled)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%s: temp files %v", c.name, left)
		}
	}
}
