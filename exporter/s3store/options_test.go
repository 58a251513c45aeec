package s3store

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestOptionsValidate(t *testing.T) {
	if errs := (Options{Bucket: "cost-data"}).Validate(); len(errs) != 0 {
		t.Fatalf("minimal Options: %v", errs)
	}
	full := Options{Bucket: "cost-data", ExpectedBucketOwner: owner, SSE: SSEKMS, SSEKMSKeyID: "arn:aws:kms:us-east-1:123456789012:key/x",
		PartSize: 64 << 20, Concurrency: 4, Checksum: "CRC64NVME", ContentType: "application/octet-stream"}
	if errs := full.Validate(); len(errs) != 0 {
		t.Fatalf("full Options: %v", errs)
	}
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{}, "Bucket"},
		{Options{Bucket: "Cost_Data"}, "Bucket"},
		{Options{Bucket: "b/x"}, "Bucket"},
		{Options{Bucket: "cost-data", ExpectedBucketOwner: "12345"}, "ExpectedBucketOwner"},
		{Options{Bucket: "cost-data", SSE: "aes256"}, "SSE"},
		{Options{Bucket: "cost-data", SSE: SSES3, SSEKMSKeyID: "k"}, "SSEKMSKeyID"},
		{Options{Bucket: "cost-data", PartSize: 1 << 20}, "PartSize"},
		{Options{Bucket: "cost-data", PartSize: 6 << 30}, "PartSize"},
		{Options{Bucket: "cost-data", Concurrency: -1}, "Concurrency"},
		{Options{Bucket: "cost-data", Concurrency: 1000}, "Concurrency"},
		{Options{Bucket: "cost-data", Checksum: "MD5"}, "Checksum"},
		{Options{Bucket: "cost-data", ContentType: "a\r\nX-Evil: 1"}, "ContentType"},
	} {
		errs := tc.opts.Validate()
		if len(errs) != 1 || errs[0].Field != tc.field {
			t.Errorf("Validate(%+v) = %v, want one %s error", tc.opts, errs, tc.field)
		}
	}
	// Every problem is reported at once, in field order.
	errs := Options{ExpectedBucketOwner: "x", SSE: "x", PartSize: 1}.Validate()
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	if !slices.Equal(fields, []string{"Bucket", "ExpectedBucketOwner", "SSE", "PartSize"}) {
		t.Errorf("fields = %v", fields)
	}
	if _, err := New(s3.New(s3.Options{}), Options{Bucket: "x"}); err == nil || !strings.Contains(err.Error(), "invalid options: Bucket=") {
		t.Errorf("New with a bad bucket = %v", err)
	}
}

func TestDefaults(t *testing.T) {
	o := Options{Bucket: "b"}.withDefaults()
	if o.PartSize != 8<<20 || o.Concurrency != 2 || o.Checksum != "CRC32" || o.ContentType != "application/vnd.apache.parquet" || o.Logger == nil {
		t.Errorf("defaults = %+v", o)
	}
}
