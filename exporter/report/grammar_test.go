package report

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/grammars"
)

// listing is a Reader that lists keys and opens none.
type listing []string

func (l listing) List(_ context.Context, prefix, _ string, fn func(exporter.ObjectInfo) error) error {
	for _, k := range l {
		if strings.HasPrefix(k, prefix) {
			if err := fn(exporter.ObjectInfo{Key: k}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (listing) Open(context.Context, string) (io.ReadCloser, error) {
	return nil, errors.New("not here")
}

// TestGrammarTables: the report finds exactly the archive keys of the key
// grammar, through ParseKey and through its listing, and names rows by
// the one spelling of Kubecost's special names.
func TestGrammarTables(t *testing.T) {
	var keys []string
	want := map[string]bool{}
	for _, tc := range grammars.Keys() {
		f, ok := ParseKey(tc.Key)
		if ok != tc.OK || (ok && (f.Cluster != tc.Cluster || f.Account != tc.Account || f.Region != tc.Region || !f.Day.Equal(tc.Day))) {
			t.Errorf("ParseKey(%q) = %+v, %v; want cluster %q, %v", tc.Key, f, ok, tc.Cluster, tc.OK)
		}
		if tc.Prefix == "" {
			keys = append(keys, tc.Key)
			want[tc.Key] = tc.OK
		}
	}
	files, _, err := listFiles(context.Background(), Options{Store: listing(keys)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range files {
		got[f.Key] = true
	}
	for k, ok := range want {
		if got[k] != ok {
			t.Errorf("listFiles: %q listed %v, want %v", k, got[k], ok)
		}
	}
	for _, tc := range grammars.Allocations() {
		if got := NamespaceOf("", tc.Name); got != tc.Namespace {
			t.Errorf("NamespaceOf(%q) = %q, want %q", tc.Name, got, tc.Namespace)
		}
	}
}
