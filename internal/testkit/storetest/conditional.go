package storetest

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// sizes are a small body and one past the part size (multipart on S3):
// conditions must hold on both paths.
func (c *suite) sizes() []int64 { return []int64{1 << 10, c.large} }

func (c *suite) testCreateOnly(t *testing.T) {
	for _, size := range c.sizes() {
		s := c.newStore(t)
		if err := s.Put(t.Context(), partitionKey, stream(5, size), nil, exporter.CreateOnly); err != nil {
			t.Fatalf("create-only Put of an absent key (%d bytes): %v", size, err)
		}
		before := hashOf(t, s, partitionKey)
		err := s.Put(t.Context(), partitionKey, stream(6, size), nil, exporter.CreateOnly)
		if !errors.Is(err, exporter.ErrPreconditionFailed) {
			t.Fatalf("create-only Put over an existing key (%d bytes) = %v, want ErrPreconditionFailed", size, err)
		}
		if !bytes.Equal(hashOf(t, s, partitionKey), before) {
			t.Fatalf("a failed create-only Put (%d bytes) changed the object", size)
		}
		assertKeys(t, s, "", "", partitionKey)
		c.assertNoLeftovers(t, s)
	}
}

func (c *suite) testReplaceOnly(t *testing.T) {
	for _, size := range c.sizes() {
		s := c.newStore(t)
		if err := s.Put(t.Context(), partitionKey, stream(7, 16), nil, exporter.ReplaceOnly(`"no-such-etag"`)); !errors.Is(err, exporter.ErrPreconditionFailed) {
			t.Fatalf("replace-only Put of an absent key = %v, want ErrPreconditionFailed", err)
		}
		assertKeys(t, s, "", "")
		put(t, s, partitionKey, "v1")
		seen := list(t, s, "", "")[0].ETag
		if err := s.Put(t.Context(), partitionKey, stream(8, size), nil, exporter.ReplaceOnly(seen)); err != nil {
			t.Fatalf("replace-only Put with the listed ETag (%d bytes): %v", size, err)
		}
		newer := list(t, s, "", "")[0].ETag
		if newer == seen {
			t.Fatalf("the ETag did not change on replacement: %s", seen)
		}
		want := hashOf(t, s, partitionKey)
		// A writer that planned against v1 must not overwrite the newer object.
		err := s.Put(t.Context(), partitionKey, stream(9, size), nil, exporter.ReplaceOnly(seen))
		if !errors.Is(err, exporter.ErrPreconditionFailed) {
			t.Fatalf("replace-only Put with a stale ETag (%d bytes) = %v, want ErrPreconditionFailed", size, err)
		}
		if !bytes.Equal(hashOf(t, s, partitionKey), want) {
			t.Fatalf("a stale replace-only Put (%d bytes) overwrote the newer object", size)
		}
		c.assertNoLeftovers(t, s)
	}
}

func (c *suite) testConcurrentCreateOnly(t *testing.T) {
	s := c.newStore(t)
	const writers, size = 4, 256 << 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for i := range writers {
		wg.Go(func() {
			err := s.Put(t.Context(), partitionKey, stream(uint64(200+i), size), nil, exporter.CreateOnly)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, exporter.ErrPreconditionFailed):
				lost++
			default:
				t.Errorf("Put %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || lost != writers-1 {
		t.Fatalf("%d create-only Puts of one key: %d succeeded, %d lost; want exactly one winner", writers, won, lost)
	}
	c.assertNoLeftovers(t, s)
}
