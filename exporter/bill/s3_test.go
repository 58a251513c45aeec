package bill_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// TestReadFromS3 reads the canonical export from a real S3 (MinIO)
// through the archive's store code: objects are listed under the export's
// prefix, read by ranges (nothing spooled) and read as from a directory.
func TestReadFromS3(t *testing.T) {
	srv := miniotest.Start(t)
	srv.CreateBucket(t, "billing")
	store, err := s3store.New(srv.S3Client(t), s3store.Options{Bucket: "billing", PartSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	dir, keys := curcheck.WriteCanonical(t, 5)
	ctx := context.Background()
	for _, key := range keys {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		err = store.Put(ctx, "cur/"+key, f, nil, exporter.Precondition{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	s, err := bill.Read(ctx, bill.Options{Store: store, Prefix: "cur/" + curfixture.Export + "/", TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	curcheck.Equal(t, s, curfixture.Expected(curfixture.Canonical()))
	if s.Stats.Files != len(keys) || s.Stats.BytesSpooled != 0 {
		t.Errorf("stats %+v", s.Stats)
	}
	day, err := bill.Read(ctx, bill.Options{Store: store, Prefix: "cur/" + curfixture.Export + "/", TempDir: tmp, From: curfixture.Day3, To: curfixture.Day3})
	if err != nil {
		t.Fatal(err)
	}
	if day.Stats.Files != 1 || len(day.Rows) == 0 {
		t.Errorf("Day3 from S3: %+v", day.Stats)
	}
	for k := range day.Rows {
		if !k.Day.Equal(curfixture.Day3) {
			t.Errorf("Day3 read has %s", k.Day.Format(time.DateOnly))
		}
	}
}

// TestReadFromS3RefusesNoExport: on S3 as in a directory, a prefix with
// no BILLING_PERIOD= folder (here the export's bucket named one folder too
// high with the wrong name, and an empty bucket) is refused, with what was
// expected, rather than read as an empty bill.
func TestReadFromS3RefusesNoExport(t *testing.T) {
	srv := miniotest.Start(t)
	srv.CreateBucket(t, "billing")
	srv.CreateBucket(t, "empty")
	ctx := context.Background()
	billing, err := s3store.New(srv.S3Client(t), s3store.Options{Bucket: "billing", PartSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	dir, keys := curcheck.WriteCanonical(t, 5)
	for _, key := range keys {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		err = billing.Put(ctx, "cur/"+key, f, nil, exporter.Precondition{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	empty, err := s3store.New(srv.S3Client(t), s3store.Options{Bucket: "empty", PartSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		store  bill.Reader
		prefix string
	}{{"wrong prefix", billing, "cur2/"}, {"empty bucket", empty, ""}} {
		s, err := bill.Read(ctx, bill.Options{Store: tc.store, Prefix: tc.prefix, TempDir: t.TempDir()})
		if err == nil {
			t.Errorf("%s: read an empty bill (%d rows) instead of refusing the location", tc.name, len(s.Rows))
		} else if !strings.Contains(err.Error(), "BILLING_PERIOD=YYYY-MM") {
			t.Errorf("%s: %v: does not say what was expected", tc.name, err)
		}
	}
	if s, err := bill.Read(ctx, bill.Options{Store: billing, Prefix: "cur/", TempDir: t.TempDir()}); err != nil || len(s.Rows) == 0 {
		t.Errorf("the export one folder up: %v", err)
	}
}
