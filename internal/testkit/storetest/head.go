package storetest

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// testHead checks what Head returns: the size, an ETag that changes with
// each Put, and exactly the metadata of the last Put (lower-case keys, as
// S3 returns them), never a merge with an earlier one.
func (c *suite) testHead(t *testing.T) {
	s := c.newStore(t)
	ctx := t.Context()
	first := map[string]string{"rows": "42", "config-fingerprint": "0123456789abcdef", "Kubecost-Day-Total": "1234.5678901234"}
	if err := s.Put(ctx, partitionKey, strings.NewReader("version one"), first, exporter.Precondition{}); err != nil {
		t.Fatal(err)
	}
	a1, err := s.Head(ctx, partitionKey)
	if err != nil {
		t.Fatalf("Head: %v", err)
	}
	want := map[string]string{"rows": "42", "config-fingerprint": "0123456789abcdef", "kubecost-day-total": "1234.5678901234"}
	if a1.Size != int64(len("version one")) || a1.ETag == "" || !maps.Equal(a1.Metadata, want) {
		t.Fatalf("Head = %+v, want size %d, an ETag and metadata %v", a1, len("version one"), want)
	}
	if again, err := s.Head(ctx, partitionKey); err != nil || again.ETag != a1.ETag {
		t.Fatalf("second Head: ETag %q (%v), want the unchanged %q", again.ETag, err, a1.ETag)
	}

	// A replacement with other metadata: the old keys are gone.
	if err := s.Put(ctx, partitionKey, strings.NewReader("version two!"), map[string]string{"rows": "7"}, exporter.Precondition{}); err != nil {
		t.Fatal(err)
	}
	a2, err := s.Head(ctx, partitionKey)
	if err != nil {
		t.Fatal(err)
	}
	if a2.Size != int64(len("version two!")) || a2.ETag == "" || a2.ETag == a1.ETag || !maps.Equal(a2.Metadata, map[string]string{"rows": "7"}) {
		t.Fatalf("Head after overwrite = %+v (first ETag %q): want a new ETag and only rows=7", a2, a1.ETag)
	}

	// Same size, no metadata at all: still a new ETag, and empty metadata.
	if err := s.Put(ctx, partitionKey, strings.NewReader("version 3 !!"), nil, exporter.Precondition{}); err != nil {
		t.Fatal(err)
	}
	a3, err := s.Head(ctx, partitionKey)
	if err != nil {
		t.Fatal(err)
	}
	if a3.ETag == a2.ETag || a3.Metadata == nil || len(a3.Metadata) != 0 {
		t.Fatalf("Head after a same-size overwrite without metadata = %+v; want a new ETag and empty, non-nil metadata", a3)
	}
	c.assertNoLeftovers(t, s)
}

func (c *suite) testHeadMissing(t *testing.T) {
	s := c.newStore(t)
	ctx := t.Context()
	if _, err := s.Head(ctx, partitionKey); !errors.Is(err, exporter.ErrNotExist) {
		t.Fatalf("Head of a missing key: %v, want ErrNotExist", err)
	}
	if err := s.Put(ctx, partitionKey, strings.NewReader("x"), map[string]string{"rows": "1"}, exporter.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, partitionKey); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, partitionKey); !errors.Is(err, exporter.ErrNotExist) {
		t.Fatalf("Head of a deleted key: %v, want ErrNotExist", err)
	}
	// A "directory" of the key layout is not an object.
	dir := partitionKey[:strings.LastIndexByte(partitionKey, '/')]
	if err := s.Put(ctx, partitionKey, strings.NewReader("x"), nil, exporter.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, dir); !errors.Is(err, exporter.ErrNotExist) {
		t.Fatalf("Head of a key prefix %q: %v, want ErrNotExist", dir, err)
	}
}

// testHeadDuringOverwrites heads a key while it is replaced again and
// again: each answer must pair a body size with the metadata written with
// that body, never the metadata of another version.
func (c *suite) testHeadDuringOverwrites(t *testing.T) {
	s := c.newStore(t)
	ctx := t.Context()
	put := func(i int) error {
		body := strings.Repeat("x", 100+i)
		return s.Put(ctx, partitionKey, strings.NewReader(body), map[string]string{"size": strconv.Itoa(len(body))}, exporter.Precondition{})
	}
	if err := put(0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= 30; i++ {
			if err := put(i); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 60 {
			a, err := s.Head(ctx, partitionKey)
			if err != nil {
				errs <- err
				return
			}
			if a.Metadata["size"] != strconv.FormatInt(a.Size, 10) {
				errs <- fmt.Errorf("head paired size %d with metadata %v", a.Size, a.Metadata)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
