package objstorecompat

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/go-kit/log"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/s3utils"
	"github.com/thanos-io/objstore/exthttp"
	"github.com/thanos-io/objstore/providers/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
)

// compareDerived holds what the exporter makes of an accepted S3 file to
// what objstore's client (minio-go v7.0.93) makes of it: the region it
// signs for, the endpoint it sends to, the addressing, TLS verification
// and the object headers. uploadFails: objstore refuses the metadata at
// upload (verdict oursSends).
func compareDerived(t *testing.T, ours *destination.File, theirs *thanosParsed, uploadFails bool) {
	t.Helper()
	if !ours.IsS3() {
		return
	}
	c := theirs.s3
	u := minioURL(t, c.Endpoint, !c.Insecure)
	// minio-go's patterns are case-sensitive and take a final dot for
	// another host; the exporter compares names as DNS does (the docs say
	// so), so minio-go is asked about the canonical name.
	canon := *u
	canon.Host = strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if p := u.Port(); p != "" {
		canon.Host += ":" + p
	}

	// api.go privateNew: the configured region, else GetRegionFromURL.
	wantRegion := c.Region
	if wantRegion == "" {
		wantRegion = s3utils.GetRegionFromURL(canon)
	}
	if got := ours.Region(); got != wantRegion {
		t.Errorf("region: exporter %q, minio-go %q", got, wantRegion)
	}

	// api.go makeTargetURL replaces an AWS host by the bucket's regional
	// endpoint, which the AWS SDK resolves as well (""), except FIPS and
	// PrivateLink hosts, sent to as written. Over http the exporter keeps
	// the host written (no table row sends to AWS over http).
	wantEndpoint := u.Scheme + "://" + u.Host
	if u.Scheme == "https" && s3utils.IsAmazonEndpoint(canon) && !s3utils.IsAmazonFIPSEndpoint(canon) && !s3utils.IsAmazonPrivateLinkEndpoint(canon) {
		wantEndpoint = ""
	}
	if got := ours.EndpointURL(); got != wantEndpoint {
		t.Errorf("endpoint: exporter %q, minio-go %q", got, wantEndpoint)
	}

	// api.go isVirtualHostStyleRequest with objstore's MinioType.
	wantAddr := destination.LookupPath
	switch c.BucketLookupType {
	case s3.VirtualHostLookup:
		wantAddr = destination.LookupVirtualHosted
	case s3.AutoLookup:
		if s3utils.IsVirtualHostSupported(canon, c.Bucket) {
			wantAddr = destination.LookupVirtualHosted
		}
	}
	if got := ours.Addressing(); got != wantAddr {
		t.Errorf("addressing: exporter %q, minio-go %q", got, wantAddr)
	}

	compareTLS(t, ours, c.HTTPConfig)
	if len(c.PutUserMetadata) > 0 {
		compareHeaders(t, ours, c, uploadFails)
	}
}

// minioURL is the endpoint URL minio-go builds (minio.New, as
// s3.NewBucketWithConfig calls it).
func minioURL(t *testing.T, endpoint string, secure bool) *url.URL {
	t.Helper()
	cl, err := minio.New(endpoint, &minio.Options{Secure: secure, Region: "us-east-1"})
	if err != nil {
		t.Fatalf("minio.New(%q): %v", endpoint, err)
	}
	return cl.EndpointURL()
}

// compareTLS holds the exporter's TLS settings to the transport objstore
// builds (exthttp.DefaultTransport).
func compareTLS(t *testing.T, ours *destination.File, hc exthttp.HTTPConfig) {
	t.Helper()
	tr, err := exthttp.DefaultTransport(hc)
	if err != nil {
		t.Fatal(err)
	}
	want := tr.TLSClientConfig
	got, err := ours.TLS()
	if err != nil {
		t.Fatal(err)
	}
	if got == nil {
		got = new(tls.Config)
	}
	if got.InsecureSkipVerify != want.InsecureSkipVerify || got.ServerName != want.ServerName ||
		(got.RootCAs == nil) != (want.RootCAs == nil) || (len(got.Certificates) > 0) != (want.GetClientCertificate != nil) {
		t.Errorf("tls: exporter skip-verify %v server %q own CA %v client cert %v; objstore %v %q %v %v",
			got.InsecureSkipVerify, got.ServerName, got.RootCAs != nil, len(got.Certificates) > 0,
			want.InsecureSkipVerify, want.ServerName, want.RootCAs != nil, want.GetClientCertificate != nil)
	}
}

// objectHeaderNames are the request headers put_user_metadata can reach.
var objectHeaderNames = []string{"X-Amz-Meta-", "X-Amz-Acl", "X-Amz-Grant-", "X-Amz-Storage-Class",
	"Cache-Control", "Content-Disposition", "Content-Language", "X-Amz-Website-Redirect-Location"}

// compareHeaders uploads one object through objstore's own bucket to a
// local server and holds the headers of its PUT to the exporter's
// Headers. When objstore refuses the metadata (uploadFails), it must say
// so before sending anything, and the exporter must send those keys as
// headers rather than as metadata.
func compareHeaders(t *testing.T, ours *destination.File, c s3.Config, uploadFails bool) {
	t.Helper()
	sent := putThroughObjstore(t, c)
	got := asHeaders(ours.Headers())
	if uploadFails {
		if sent != nil {
			t.Fatalf("objstore uploaded with %v; the row says it refuses", c.PutUserMetadata)
		}
		for k := range got {
			if strings.HasPrefix(k, "X-Amz-Meta-") && !strings.EqualFold(k, "X-Amz-Meta-Team") {
				t.Errorf("the exporter sends %s as metadata", k)
			}
		}
		return
	}
	if sent == nil {
		t.Fatal("objstore did not upload")
	}
	want := http.Header{}
	for k, v := range sent {
		for _, n := range objectHeaderNames {
			if strings.HasPrefix(k, n) {
				want[k] = v
			}
		}
	}
	for k := range want {
		if got.Get(k) != want.Get(k) {
			t.Errorf("header %s: exporter %q, objstore %q", k, got.Get(k), want.Get(k))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("header %s: the exporter sends it, objstore does not", k)
		}
	}
}

// putThroughObjstore uploads through s3.NewBucketWithConfig with the
// file's metadata, to a local server over http with static keys, and
// returns the PUT's headers, or nil when the upload failed.
func putThroughObjstore(t *testing.T, c s3.Config) http.Header {
	t.Helper()
	var mu sync.Mutex
	var sent http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			mu.Lock()
			sent = r.Header.Clone()
			mu.Unlock()
		}
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	}))
	defer srv.Close()
	cfg := s3.DefaultConfig
	cfg.PutUserMetadata = map[string]string{}
	for k, v := range c.PutUserMetadata { // NewBucketWithConfig deletes from it
		cfg.PutUserMetadata[k] = v
	}
	cfg.Bucket, cfg.Endpoint, cfg.Insecure = c.Bucket, strings.TrimPrefix(srv.URL, "http://"), true
	cfg.Region, cfg.AccessKey, cfg.SecretKey, cfg.BucketLookupType = "us-east-1", "a", "s", s3.PathLookup
	bkt, err := s3.NewBucketWithConfig(log.NewNopLogger(), cfg, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bkt.Upload(context.Background(), "o", strings.NewReader("x"))
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		if !strings.Contains(err.Error(), "unsupported user defined metadata name") {
			t.Fatalf("objstore upload: %v", err)
		}
		return nil
	}
	return sent
}

// callThroughObjstore lists and uploads through s3.NewBucketWithConfig
// with the file's bucket, to a local server, and returns the first error.
func callThroughObjstore(t *testing.T, c s3.Config) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	}))
	defer srv.Close()
	cfg := s3.DefaultConfig
	cfg.PutUserMetadata = map[string]string{}
	cfg.Bucket, cfg.Endpoint, cfg.Insecure = c.Bucket, strings.TrimPrefix(srv.URL, "http://"), true
	cfg.Region, cfg.AccessKey, cfg.SecretKey, cfg.BucketLookupType = "us-east-1", "a", "s", s3.PathLookup
	bkt, err := s3.NewBucketWithConfig(log.NewNopLogger(), cfg, "test", nil)
	if err != nil {
		return err
	}
	if err := bkt.Iter(context.Background(), "", func(string) error { return nil }); err != nil {
		return err
	}
	return bkt.Upload(context.Background(), "o", strings.NewReader("x"))
}

// asHeaders renders the exporter's headers as the SDK sends them.
func asHeaders(h s3store.ObjectHeaders) http.Header {
	out := http.Header{}
	set := func(k, v string) {
		if v != "" {
			out.Set(k, v)
		}
	}
	set("X-Amz-Acl", h.ACL)
	set("X-Amz-Storage-Class", h.StorageClass)
	set("X-Amz-Grant-Read", h.GrantRead)
	set("X-Amz-Grant-Read-Acp", h.GrantReadACP)
	set("X-Amz-Grant-Write-Acp", h.GrantWriteACP)
	set("X-Amz-Grant-Full-Control", h.GrantFullControl)
	set("Cache-Control", h.CacheControl)
	set("Content-Disposition", h.ContentDisposition)
	set("Content-Language", h.ContentLanguage)
	set("X-Amz-Website-Redirect-Location", h.WebsiteRedirectLocation)
	for k, v := range h.Metadata {
		out.Set("X-Amz-Meta-"+k, v)
	}
	return out
}
