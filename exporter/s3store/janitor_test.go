package s3store

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// TestAbortStale answers ListMultipartUploads as S3 does for a prefix
// (every upload under it, across two pages) and checks that only this
// cluster's day files older than the limit are aborted. MinIO cannot
// serve this test: it lists uploads only for an exact key.
func TestAbortStale(t *testing.T) {
	l := exporter.Layout{Account: "111122223333", Region: "us-east-1", Cluster: "prod"}
	old, fresh := time.Now().Add(-3*time.Hour), time.Now()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	type upload struct {
		key       string
		initiated time.Time
		abort     bool
	}
	uploads := []upload{
		{l.Key(day, exporter.Snappy), old, true},
		{l.Key(day.AddDate(0, 0, 1), exporter.Zstd), old, true},
		{l.Key(day.AddDate(0, 0, 2), exporter.Snappy), fresh, false}, // maybe a concurrent run's
		{exporter.Layout{Account: l.Account, Region: l.Region, Cluster: "prod-eu"}.Key(day, exporter.Snappy), old, false},
		{l.PartitionPrefix() + "notes.txt", old, false},
		{l.Key(day, exporter.Snappy) + ".bak", old, false},
	}
	rec := &recorder{}
	rec.respond = func(req *http.Request) *http.Response {
		switch operation(req) {
		case "ListMultipartUploads":
			// Two pages: the first three, then the rest.
			page, next := uploads[:3], `<IsTruncated>true</IsTruncated><NextKeyMarker>m</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>`
			if req.URL.Query().Get("key-marker") != "" {
				page, next = uploads[3:], `<IsTruncated>false</IsTruncated>`
			}
			var b strings.Builder
			b.WriteString(`<ListMultipartUploadsResult><Bucket>bucket</Bucket>` + next)
			for i, u := range page {
				fmt.Fprintf(&b, `<Upload><Key>%s</Key><UploadId>u%d</UploadId><Initiated>%s</Initiated></Upload>`, u.key, i, u.initiated.UTC().Format(time.RFC3339))
			}
			b.WriteString(`</ListMultipartUploadsResult>`)
			return xmlResponse(http.StatusOK, b.String())
		}
		return okResponse(req)
	}
	client := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://fake.example"), UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}, HTTPClient: rec, RetryMaxAttempts: 1,
	})
	s := newStore(t, client, Options{Bucket: "bucket"})
	match := func(k string) bool { _, ok := l.ParseDay(k); return ok }
	n, err := s.AbortStale(t.Context(), l.PartitionPrefix(), time.Now().Add(-time.Hour), match)
	if err != nil {
		t.Fatal(err)
	}
	var aborted, want []string
	for _, q := range rec.requests() {
		if q.Op == "AbortMultipartUpload" {
			k, _ := url.PathUnescape(strings.TrimPrefix(q.Path, "/bucket/"))
			aborted = append(aborted, k)
		}
		if q.Op == "ListMultipartUploads" && q.Query.Get("prefix") != l.PartitionPrefix() {
			t.Errorf("listed with prefix %q, want %q", q.Query.Get("prefix"), l.PartitionPrefix())
		}
	}
	for _, u := range uploads {
		if u.abort {
			want = append(want, u.key)
		}
	}
	if n != len(want) || !slices.Equal(aborted, want) {
		t.Fatalf("aborted %d: %q, want %q", n, aborted, want)
	}
}
