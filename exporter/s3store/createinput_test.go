package s3store

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestCreateInputKeepsEveryHeader: a day file large enough for parts
// carries every header a single PutObject would. Each field the two
// request types share is set on the PutObjectInput and must arrive on the
// CreateMultipartUploadInput, except those that describe one request's
// body or condition.
func TestCreateInputKeepsEveryHeader(t *testing.T) {
	perRequest := map[string]bool{
		"Body": true, "ContentLength": true, "ContentMD5": true, "IfMatch": true, "IfNoneMatch": true,
		// Checksum values are per body; the algorithm is shared.
		"ChecksumCRC32": true, "ChecksumCRC32C": true, "ChecksumCRC64NVME": true, "ChecksumSHA1": true, "ChecksumSHA256": true,
		"WriteOffsetBytes": true,
	}
	var put s3.PutObjectInput
	pv := reflect.ValueOf(&put).Elem()
	cv := reflect.TypeOf(s3.CreateMultipartUploadInput{})
	var shared []string
	for i := range pv.NumField() {
		f := pv.Type().Field(i)
		cf, ok := cv.FieldByName(f.Name)
		if !ok || perRequest[f.Name] || !f.IsExported() || cf.Type != f.Type {
			continue
		}
		shared = append(shared, f.Name)
		setNonZero(t, pv.Field(i), f.Name)
	}
	got := reflect.ValueOf(createInput(&put)).Elem()
	var lost []string
	for _, name := range shared {
		if !reflect.DeepEqual(got.FieldByName(name).Interface(), pv.FieldByName(name).Interface()) {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 {
		t.Errorf("createInput drops %v (of %d shared fields)", lost, len(shared))
	}
	if len(shared) < 20 {
		t.Errorf("only %d shared fields found: %v", len(shared), shared)
	}
}

// setNonZero gives v a value that differs from its zero value. Fields the
// exporter never sets (Object Lock, SSE-C, tagging, bucket keys) are set
// too, so that a header objectInput sets later is not lost either.
func setNonZero(t *testing.T, v reflect.Value, name string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		setNonZero(t, e.Elem(), name)
		v.Set(e)
	case reflect.String:
		v.SetString("v-" + name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Map:
		v.Set(reflect.MakeMapWithSize(v.Type(), 1))
		v.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf("v"))
	case reflect.Struct:
		// time.Time (ObjectLockRetainUntilDate): any instant will do.
		v.Set(reflect.ValueOf(time.Unix(1, 0)))
	default:
		t.Fatalf("%s: no value for kind %s", name, v.Kind())
	}
}
