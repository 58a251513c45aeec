package config

import (
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Load reads only its lookup function: concurrent loads each see their
// own values, and the process environment is left as it was.
func TestLoadIsolated(t *testing.T) {
	t.Parallel()
	before := map[string]*string{}
	for _, v := range Vars() {
		if val, ok := os.LookupEnv(v.Name); ok {
			before[v.Name] = &val
		} else {
			before[v.Name] = nil
		}
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			bucket := fmt.Sprintf("bucket-%03d", i)
			c, err := loadWith(map[string]string{"S3_BUCKET_NAME": bucket, "CONCURRENCY": fmt.Sprint(i%8 + 1)})
			if err != nil {
				t.Errorf("load %d: %v", i, err)
				return
			}
			if c.S3BucketName != bucket || c.Concurrency != i%8+1 {
				t.Errorf("load %d saw bucket %q, concurrency %d: another load's values", i, c.S3BucketName, c.Concurrency)
			}
		})
	}
	wg.Wait()
	for name, want := range before {
		got, ok := os.LookupEnv(name)
		if (want == nil) == ok || (ok && got != *want) {
			t.Errorf("Load changed the process environment: %s", name)
		}
	}
}

// Every field names its variable and has a decoder, so adding a field of
// an unsupported type fails here rather than at a user's first run.
func TestEveryFieldDecodes(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(Config{})
	for _, f := range reflect.VisibleFields(typ) { // the destination's too
		if !f.IsExported() || f.Anonymous {
			continue // state Load derives, not a variable
		}
		if f.Tag.Get("env") == "" || f.Tag.Get("desc") == "" {
			t.Errorf("field %s needs env and desc tags", f.Name)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("field %s: %v", f.Name, r)
				}
			}()
			decodeField(reflect.New(f.Type).Elem(), "1")
		}()
	}
}

// Integer variables that do not parse are reported with the variable,
// every one of them, and not validated further.
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	_, err := loadWith(map[string]string{"CONCURRENCY": "two", "BACKFILL_PERIOD_DAYS": "1.5", "TLS_VERIFY": "maybe"})
	errs, ok := err.(exporter.FieldErrors)
	if !ok || len(errs) != 3 {
		t.Fatalf("Load = %v, want three field errors", err)
	}
	for _, e := range errs {
		if e.Field != "BACKFILL_PERIOD_DAYS" && e.Field != "TLS_VERIFY" && e.Field != "CONCURRENCY" {
			t.Errorf("unexpected error %v", e)
		}
	}
}

// Every rule belongs to a known variable, once.
func TestRulesNameVariables(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, v := range varsOf(reflect.TypeOf(Config{})) { // with AWS_REGION, which Vars leaves to AWS
		known[v.Name] = true
	}
	seen := map[string]bool{}
	for _, r := range Rules() {
		if !known[r.Var] || seen[r.Var] {
			t.Errorf("rule for %s: unknown or repeated variable", r.Var)
		}
		seen[r.Var] = true
	}
}
