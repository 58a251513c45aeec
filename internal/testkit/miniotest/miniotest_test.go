package miniotest

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

func TestServerRoundTripAndLeastPrivilege(t *testing.T) {
	begin := time.Now()
	srv := Start(t)
	t.Logf("minio live at %s after %v", srv.Endpoint, time.Since(begin).Round(time.Millisecond))

	const bucket = "cost-data"
	srv.CreateBucket(t, bucket)
	root := srv.S3Client(t)
	ctx := t.Context()

	const key = "a/2024-01-01_prod.snappy.parquet"
	if _, err := root.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("hello"),
	}); err != nil {
		t.Fatalf("put: %v", err)
	}
	got, err := root.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	body, err := io.ReadAll(got.Body)
	got.Body.Close()
	if err != nil || string(body) != "hello" {
		t.Fatalf("get body = %q, %v; want hello", body, err)
	}
	list, err := root.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("a/")})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Contents) != 1 || aws.ToString(list.Contents[0].Key) != key {
		t.Fatalf("list = %+v, want exactly %s", list.Contents, key)
	}

	// A writer that may only put under a/: the shape of policy we document.
	policy := `{
	  "Version": "2012-10-17",
	  "Statement": [{
	    "Effect": "Allow",
	    "Action": ["s3:PutObject"],
	    "Resource": ["arn:aws:s3:::` + bucket + `/a/*"]
	  }]
	}`
	srv.AddUser(t, "writer-a", "writer-a-secret-123", policy)
	writer := srv.S3ClientAs(t, "writer-a", "writer-a-secret-123")

	if _, err := writer.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String("a/ok"), Body: strings.NewReader("x"),
	}); err != nil {
		t.Fatalf("put under allowed prefix: %v", err)
	}
	_, err = writer.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String("b/denied"), Body: strings.NewReader("x"),
	})
	assertAccessDenied(t, "put under b/", err)
	_, err = writer.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	assertAccessDenied(t, "list without s3:ListBucket", err)
}

func assertAccessDenied(t *testing.T, what string, err error) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDenied" {
		t.Fatalf("%s: err = %v, want AccessDenied", what, err)
	}
}

func TestFindBinaryOrder(t *testing.T) {
	dir := t.TempDir()
	exe := func(p string) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	explicit := exe(filepath.Join(dir, "explicit", "minio"))
	exe(filepath.Join(dir, "tools", "minio@v0.0.0-20250101000000-aaaaaaaaaaaa", "minio"))
	newer := exe(filepath.Join(dir, "tools", "minio@v0.0.0-20260212201848-7aac2a2c5b7c", "minio"))
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}

	if got, err := FindBinary(env(map[string]string{"MINIO_BIN": explicit, "KSE_TOOLS_DIR": filepath.Join(dir, "tools")})); err != nil || got != explicit {
		t.Errorf("MINIO_BIN wins: got %q, %v", got, err)
	}
	if _, err := FindBinary(env(map[string]string{"MINIO_BIN": filepath.Join(dir, "nope")})); err == nil {
		t.Errorf("a missing MINIO_BIN must be an error, not a fallback")
	}
	if got, err := FindBinary(env(map[string]string{"KSE_TOOLS_DIR": filepath.Join(dir, "tools")})); err != nil || got != newer {
		t.Errorf("tools cache: got %q, %v; want newest %q", got, err, newer)
	}
	xdg := filepath.Join(dir, "xdg")
	cached := exe(filepath.Join(xdg, "kubecost-s3-exporter", "tools", "minio@v1", "minio"))
	if got, err := FindBinary(env(map[string]string{"XDG_CACHE_HOME": xdg})); err != nil || got != cached {
		t.Errorf("XDG cache: got %q, %v; want %q", got, err, cached)
	}
}
