package s3store

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// TestNewTrustsOptions: the store repeats none of the destination's rules
// (destination's TestRulesAtConfiguration holds them); it refuses only
// what no configuration can produce, a missing bucket.
func TestNewTrustsOptions(t *testing.T) {
	if _, err := New(s3.New(s3.Options{}), Options{}); err == nil || !strings.Contains(err.Error(), "no bucket") {
		t.Errorf("New without a bucket = %v", err)
	}
	if _, err := New(s3.New(s3.Options{}), Options{Bucket: "cost-data", PartSize: 64 << 20, Concurrency: 4}); err != nil {
		t.Errorf("New: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	o := Options{Bucket: "b"}.withDefaults()
	if o.PartSize != 0 || o.Concurrency != 2 || o.Checksum != "CRC32" || o.ContentType != "application/vnd.apache.parquet" || o.Logger == nil {
		t.Errorf("defaults = %+v", o)
	}
}

// TestPutNeedsPartSize: the part size is the destination's (its default
// and S3's limits); a store opened without one reads, and refuses to
// write rather than guess.
func TestPutNeedsPartSize(t *testing.T) {
	s, err := New(s3.New(s3.Options{}), Options{Bucket: "cost-data"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "k", strings.NewReader("x"), nil, exporter.Precondition{}); err == nil || !strings.Contains(err.Error(), "no part size") {
		t.Errorf("Put without a part size: %v", err)
	}
}
