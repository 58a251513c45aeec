package miniotest

import (
	"testing"
	"time"
)

func TestZZTiming(t *testing.T) {
	b := time.Now()
	srv := Start(t)
	t.Logf("start %v", time.Since(b))
	b = time.Now()
	srv.CreateBucket(t, "xyz")
	t.Logf("bucket %v", time.Since(b))
	b = time.Now()
	srv.AddUser(t, "usr1", "u1-secret-1234", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject"],"Resource":["arn:aws:s3:::xyz/*"]}]}`)
	t.Logf("adduser %v", time.Since(b))
	b = time.Now()
	srv.stop()
	t.Logf("stop %v", time.Since(b))
}
