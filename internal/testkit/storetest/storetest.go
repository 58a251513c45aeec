// Package storetest is the acceptance suite every exporter.ObjectStore
// must pass. Each store package runs it from its own tests against the real
// backend (a temp directory, a throw-away MinIO; app's in-memory fake too),
// so the stores cannot drift apart in the behaviours the exporter relies
// on: lexical listing with prefix and startAfter (with pagination, and the
// Hive partition keys of CONTRACT §3), whole-or-nothing Puts of streamed
// and seekable bodies (a failing reader or a cancelled context leaves no
// object and keeps the old one), ErrNotExist for missing keys, Head's
// size, ETag and metadata (also during overwrites), and the conditional
// writes that keep concurrent runs apart: CreateOnly and ReplaceOnly, of
// which exactly one concurrent writer wins. Options size the large and
// many-key cases and let a store report what a failed write left behind.
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) exporter.ObjectStore { return newEmptyStore(t) })
//	}
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Defaults for the knobs below.
const (
	// DefaultLargeSize is big enough to go multipart with the S3 store's
	// default 8 MiB parts (three parts), and cheap enough for a local run.
	DefaultLargeSize int64 = 20 << 20
	// DefaultFailAfter is where the failing readers fail: past the first
	// 8 MiB part, so on S3 a multipart upload exists and must be aborted.
	DefaultFailAfter int64 = 12 << 20
	// DefaultManyKeys is past one ListObjectsV2 page (1000 keys).
	DefaultManyKeys = 1100
)

// Option tunes the suite for a store.
type Option func(*suite)

// WithLeftovers sets a hook that returns anything a store keeps outside
// what List shows, such as unfinished multipart uploads on S3 or temp files
// in a directory. The suite requires it to be empty after failed and
// cancelled Puts.
func WithLeftovers(fn func(t *testing.T, s exporter.ObjectStore) []string) Option {
	return func(c *suite) { c.leftovers = fn }
}

// WithLargeSize sets the size of the big streamed object; pick one above
// the store's part size so the multipart path runs.
func WithLargeSize(n int64) Option { return func(c *suite) { c.large = n } }

// WithFailAfter sets how many bytes the failing readers deliver before
// failing; pick one above the store's part size.
func WithFailAfter(n int64) Option { return func(c *suite) { c.failAfter = n } }

// WithManyKeys sets how many objects the pagination test writes.
func WithManyKeys(n int) Option { return func(c *suite) { c.many = n } }

type suite struct {
	newStore  func(t *testing.T) exporter.ObjectStore
	leftovers func(t *testing.T, s exporter.ObjectStore) []string
	large     int64
	failAfter int64
	many      int
}

// Run runs the suite. newStore must return an empty store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) exporter.ObjectStore, opts ...Option) {
	c := &suite{newStore: newStore, large: DefaultLargeSize, failAfter: DefaultFailAfter, many: DefaultManyKeys}
	for _, o := range opts {
		o(c)
	}
	if c.failAfter >= c.large {
		t.Fatalf("storetest: FailAfter (%d) must be below LargeSize (%d)", c.failAfter, c.large)
	}
	t.Run("PutOpenLargeStream", c.testLargeStream)
	t.Run("PutOpenSeekableFile", c.testSeekableFile)
	t.Run("PutEmpty", c.testEmpty)
	t.Run("PartitionKeys", c.testPartitionKeys)
	t.Run("ListPrefixStartAfter", c.testList)
	t.Run("ListStopsOnCallbackError", c.testListStop)
	t.Run("ListPagination", c.testPagination)
	t.Run("Overwrite", c.testOverwrite)
	t.Run("OpenMissing", c.testOpenMissing)
	t.Run("Delete", c.testDelete)
	t.Run("FailingReaderLeavesNothing", c.testFailingReader)
	t.Run("FailingReaderKeepsOldObject", c.testFailingOverwrite)
	t.Run("CancelledContext", c.testCancelled)
	t.Run("ConcurrentPutsSameKey", c.testConcurrentSameKey)
	t.Run("HeadMetadata", c.testHead)
	t.Run("HeadMissing", c.testHeadMissing)
	t.Run("HeadDuringOverwrites", c.testHeadDuringOverwrites)
	t.Run("CreateOnly", c.testCreateOnly)
	t.Run("ReplaceOnly", c.testReplaceOnly)
	t.Run("ConcurrentCreateOnlyOneWins", c.testConcurrentCreateOnly)
}

// A key shaped like the ones the exporter writes (CONTRACT §3).
const partitionKey = "account_id=123456789012/region=us-east-1/year=2026/month=03/2026-03-01_prod.snappy.parquet"

var errBoom = errors.New("storetest: producer failed")

func (c *suite) testLargeStream(t *testing.T) {
	s := c.newStore(t)
	ctx := t.Context()
	want := sha256.New()
	if err := s.Put(ctx, partitionKey, io.TeeReader(stream(1, c.large), want), map[string]string{"rows": "42"}, exporter.Precondition{}); err != nil {
		t.Fatalf("Put %d bytes: %v", c.large, err)
	}
	if got := hashOf(t, s, partitionKey); !bytes.Equal(got, want.Sum(nil)) {
		t.Fatalf("Open returned different content than was put (%d bytes)", c.large)
	}
	assertList(t, s, "", "", []exporter.ObjectInfo{{Key: partitionKey, Size: c.large}})
}

// testSeekableFile puts a spooled file, as the exporter does: stores may
// read it in place (S3 parts as file sections) and must still store every
// byte, starting from the file's current offset 0.
func (c *suite) testSeekableFile(t *testing.T) {
	s := c.newStore(t)
	f, err := os.CreateTemp(t.TempDir(), "spool-*.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, want), stream(2, c.large)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), partitionKey, f, map[string]string{"rows": "7"}, exporter.Precondition{}); err != nil {
		t.Fatalf("Put file of %d bytes: %v", c.large, err)
	}
	if got := hashOf(t, s, partitionKey); !bytes.Equal(got, want.Sum(nil)) {
		t.Fatalf("Open returned different content than the file (%d bytes)", c.large)
	}
	assertList(t, s, "", "", []exporter.ObjectInfo{{Key: partitionKey, Size: c.large}})
}

func (c *suite) testEmpty(t *testing.T) {
	s := c.newStore(t)
	put(t, s, "empty/file", "")
	if got := read(t, s, "empty/file"); got != "" {
		t.Fatalf("Open(empty) = %q", got)
	}
	assertList(t, s, "", "", []exporter.ObjectInfo{{Key: "empty/file", Size: 0}})
}

func (c *suite) testPartitionKeys(t *testing.T) {
	s := c.newStore(t)
	keys := []string{
		partitionKey,
		"team-a/costs/account_id=123456789012/region=eu-west-1/year=2026/month=12/2026-12-31_prod-eu.zstd.parquet",
		"odd/a b+c=d,e@f.parquet",
	}
	for _, k := range keys {
		put(t, s, k, "content of "+k)
	}
	for _, k := range keys {
		if got := read(t, s, k); got != "content of "+k {
			t.Errorf("Open(%q) = %q", k, got)
		}
	}
	assertKeys(t, s, "account_id=123456789012/region=us-east-1/", "", partitionKey)
	assertKeys(t, s, "team-a/costs/", "team-a/costs/account_id=123456789012/region=eu-west-1/year=2026/month=11/", keys[1])
}

// listKeys are chosen so that the lexical order differs from a naive
// directory walk ('-' < '/' < '0' < '=') and cluster names share prefixes.
// No key is also a "directory" of another key: a filesystem cannot hold
// both, and the exporter never writes such pairs.
var listKeys = []string{
	"a-c",
	"a/b-c/x",
	"a/b/c",
	"a/b0",
	"a/b=1/y",
	"p/month=02/2026-02-28_prod.snappy.parquet",
	"p/month=03/2026-03-01_prod-eu.snappy.parquet",
	"p/month=03/2026-03-01_prod.snappy.parquet",
	"p/month=03/2026-03-02_prod.snappy.parquet",
	"p/month=10/2026-10-01_prod.snappy.parquet",
	"z",
}

func (c *suite) testList(t *testing.T) {
	if !slices.IsSorted(listKeys) {
		t.Fatal("storetest: listKeys must be sorted")
	}
	s := c.newStore(t)
	shuffled := slices.Clone(listKeys)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, k := range shuffled {
		put(t, s, k, k)
	}
	for _, tc := range []struct {
		prefix, startAfter string
		want               []string
	}{
		{"", "", listKeys},
		{"a", "", listKeys[:5]},
		{"a/", "", listKeys[1:5]},
		{"a/b", "", listKeys[1:5]},
		{"a/b/", "", []string{"a/b/c"}},
		{"a/b0", "", []string{"a/b0"}}, // a prefix that is a whole key
		{"a/", "a/b", listKeys[1:5]},   // startAfter that is no key
		{"a/b", "a/b-c/x", listKeys[2:5]},
		{"a/", "a/b/c", listKeys[3:5]},
		{"p/month=03/", "", listKeys[6:9]},
		{"p/", "p/month=03/", listKeys[6:10]},
		{"p/", "p/month=03/2026-03-01_prod.snappy.parquet", listKeys[8:10]},
		{"p/month=03/2026-03-01_prod.", "", listKeys[7:8]},
		{"p/", "a", listKeys[5:10]}, // startAfter before the prefix
		{"p/", "q", nil},            // startAfter after the prefix
		{"", "p/month=10/2026-10-01_prod.snappy.parquet", listKeys[10:]},
		{"nothing/", "", nil},
		{"z/", "", nil}, // a key is not a directory
		{"a/b/c/", "", nil},
	} {
		assertKeys(t, s, tc.prefix, tc.startAfter, tc.want...)
	}
	// Sizes are reported.
	assertList(t, s, "a/b/", "", []exporter.ObjectInfo{{Key: "a/b/c", Size: int64(len("a/b/c"))}})
}

func (c *suite) testListStop(t *testing.T) {
	s := c.newStore(t)
	for _, k := range []string{"k/1", "k/2", "k/3"} {
		put(t, s, k, k)
	}
	stop := errors.New("stop")
	calls := 0
	err := s.List(t.Context(), "k/", "", func(exporter.ObjectInfo) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Fatalf("List = %v after %d calls, want the callback's error after 2", err, calls)
	}
}

func (c *suite) testPagination(t *testing.T) {
	s := c.newStore(t)
	keys := make([]string, c.many)
	for i := range keys {
		keys[i] = fmt.Sprintf("many/year=2026/%05d.parquet", i)
	}
	// Tiny objects, written concurrently: the point is the listing.
	var wg sync.WaitGroup
	next := make(chan string)
	errs := make(chan error, c.many)
	for range 16 {
		wg.Go(func() {
			for k := range next {
				if err := s.Put(t.Context(), k, bytes.NewReader([]byte("x")), nil, exporter.Precondition{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, k := range keys {
		next <- k
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Put: %v", err)
	}
	put(t, s, "other/x", "x") // outside the prefix
	assertKeys(t, s, "many/", "", keys...)
	mid := c.many / 2
	assertKeys(t, s, "many/", keys[mid], keys[mid+1:]...)
}

func (c *suite) testOverwrite(t *testing.T) {
	s := c.newStore(t)
	put(t, s, partitionKey, "first version, the longer one")
	put(t, s, partitionKey, "second")
	if got := read(t, s, partitionKey); got != "second" {
		t.Fatalf("after overwrite Open = %q, want %q", got, "second")
	}
	assertList(t, s, "", "", []exporter.ObjectInfo{{Key: partitionKey, Size: int64(len("second"))}})
}

func (c *suite) testOpenMissing(t *testing.T) {
	s := c.newStore(t)
	put(t, s, "dir/file", "x")
	for _, k := range []string{"missing", "dir/missing", "dir", "dir/file/below"} {
		rc, err := s.Open(t.Context(), k)
		if err == nil {
			rc.Close()
		}
		if !errors.Is(err, exporter.ErrNotExist) {
			t.Errorf("Open(%q) = %v, want ErrNotExist", k, err)
		}
	}
}

func (c *suite) testDelete(t *testing.T) {
	s := c.newStore(t)
	ctx := t.Context()
	put(t, s, "d/a", "a")
	put(t, s, "d/b/c", "c")
	if err := s.Delete(ctx, "d/a"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Open(ctx, "d/a"); !errors.Is(err, exporter.ErrNotExist) {
		t.Fatalf("Open after Delete = %v, want ErrNotExist", err)
	}
	for _, k := range []string{"d/a", "never/was", "d/b"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Errorf("Delete(%q) of a missing key = %v, want nil", k, err)
		}
	}
	// Deleting "d/b" (no such object) must not touch "d/b/c".
	assertKeys(t, s, "", "", "d/b/c")
}

func (c *suite) testFailingReader(t *testing.T) {
	for _, n := range []int64{0, 1 << 10, c.failAfter} {
		t.Run(fmt.Sprintf("after%dBytes", n), func(t *testing.T) {
			s := c.newStore(t)
			err := s.Put(t.Context(), partitionKey, failAfter(stream(2, c.large), n), nil, exporter.Precondition{})
			if !errors.Is(err, errBoom) {
				t.Fatalf("Put with a reader failing after %d bytes = %v, want an error wrapping the reader's", n, err)
			}
			c.assertNothing(t, s, partitionKey)
		})
	}
}

func (c *suite) testFailingOverwrite(t *testing.T) {
	s := c.newStore(t)
	put(t, s, partitionKey, "yesterday's good file")
	if err := s.Put(t.Context(), partitionKey, failAfter(stream(3, c.large), c.failAfter), nil, exporter.Precondition{}); !errors.Is(err, errBoom) {
		t.Fatalf("Put = %v, want the reader's error", err)
	}
	if got := read(t, s, partitionKey); got != "yesterday's good file" {
		t.Fatalf("a failed overwrite changed the object to %d bytes", len(got))
	}
	c.assertNoLeftovers(t, s)
}

func (c *suite) testCancelled(t *testing.T) {
	t.Run("before", func(t *testing.T) {
		s := c.newStore(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := s.Put(ctx, partitionKey, stream(4, 1<<10), nil, exporter.Precondition{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put with a cancelled ctx = %v, want context.Canceled", err)
		}
		c.assertNothing(t, s, partitionKey)
	})
	t.Run("midway", func(t *testing.T) {
		s := c.newStore(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// The producer cancels after failAfter bytes but keeps producing
		// until the end: only the store's own ctx checks can stop it.
		r := &hook{r: stream(5, c.large), at: c.failAfter, fn: cancel}
		if err := s.Put(ctx, partitionKey, r, nil, exporter.Precondition{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put cancelled after %d bytes = %v, want context.Canceled", c.failAfter, err)
		}
		c.assertNothing(t, s, partitionKey)
	})
}

func (c *suite) testConcurrentSameKey(t *testing.T) {
	s := c.newStore(t)
	const writers, size = 4, 256 << 10
	sums := make([][]byte, writers)
	var wg sync.WaitGroup
	for i := range writers {
		h := sha256.New()
		_, _ = io.Copy(h, stream(uint64(100+i), size))
		sums[i] = h.Sum(nil)
		wg.Go(func() {
			if err := s.Put(t.Context(), partitionKey, stream(uint64(100+i), size), nil, exporter.Precondition{}); err != nil {
				t.Errorf("Put %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	got := hashOf(t, s, partitionKey)
	if !slices.ContainsFunc(sums, func(s []byte) bool { return bytes.Equal(s, got) }) {
		t.Fatal("after concurrent Puts the object matches none of them: writes were interleaved")
	}
	assertList(t, s, "", "", []exporter.ObjectInfo{{Key: partitionKey, Size: size}})
}

// assertNothing checks that key is absent and nothing was left behind.
func (c *suite) assertNothing(t *testing.T, s exporter.ObjectStore, key string) {
	t.Helper()
	if rc, err := s.Open(context.Background(), key); !errors.Is(err, exporter.ErrNotExist) {
		if err == nil {
			rc.Close()
		}
		t.Errorf("Open(%q) after a failed Put = %v, want ErrNotExist", key, err)
	}
	assertKeys(t, s, "", "")
	c.assertNoLeftovers(t, s)
}

func (c *suite) assertNoLeftovers(t *testing.T, s exporter.ObjectStore) {
	t.Helper()
	if c.leftovers == nil {
		return
	}
	if left := c.leftovers(t, s); len(left) > 0 {
		t.Errorf("a failed Put left behind %q", left)
	}
}

// stream returns size deterministic pseudo-random bytes behind a plain
// io.Reader: no Seek, ReadAt or WriteTo, like the pipe from the Parquet
// encoder, so stores cannot take a shortcut.
func stream(seed uint64, size int64) io.Reader {
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	return struct{ io.Reader }{io.LimitReader(rand.NewChaCha8(s), size)}
}

// failAfter delivers n bytes of r, then fails with errBoom.
func failAfter(r io.Reader, n int64) io.Reader {
	return struct{ io.Reader }{io.MultiReader(io.LimitReader(r, n), errReader{})}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBoom }

// hook calls fn once the reader has delivered at least `at` bytes.
type hook struct {
	r    io.Reader
	n    int64
	at   int64
	fn   func()
	once sync.Once
}

func (h *hook) Read(p []byte) (int, error) {
	if h.n >= h.at {
		h.once.Do(h.fn)
	}
	if rest := h.at - h.n; rest > 0 && int64(len(p)) > rest {
		p = p[:rest] // stop exactly at the hook point
	}
	n, err := h.r.Read(p)
	h.n += int64(n)
	return n, err
}

func put(t *testing.T, s exporter.ObjectStore, key, content string) {
	t.Helper()
	if err := s.Put(t.Context(), key, struct{ io.Reader }{bytes.NewReader([]byte(content))}, nil, exporter.Precondition{}); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func read(t *testing.T, s exporter.ObjectStore, key string) string {
	t.Helper()
	rc, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return string(b)
}

func hashOf(t *testing.T, s exporter.ObjectStore, key string) []byte {
	t.Helper()
	rc, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return h.Sum(nil)
}

func list(t *testing.T, s exporter.ObjectStore, prefix, startAfter string) []exporter.ObjectInfo {
	t.Helper()
	var got []exporter.ObjectInfo
	if err := s.List(t.Context(), prefix, startAfter, func(o exporter.ObjectInfo) error {
		got = append(got, o)
		return nil
	}); err != nil {
		t.Fatalf("List(%q, %q): %v", prefix, startAfter, err)
	}
	return got
}

func assertList(t *testing.T, s exporter.ObjectStore, prefix, startAfter string, want []exporter.ObjectInfo) {
	t.Helper()
	got := list(t, s, prefix, startAfter)
	for i := range got {
		if got[i].ETag == "" {
			t.Errorf("List(%q, %q): %s has no ETag", prefix, startAfter, got[i].Key)
		}
		got[i].ETag = "" // compared by the precondition tests
	}
	if !slices.Equal(got, want) {
		t.Errorf("List(%q, %q) = %v, want %v", prefix, startAfter, got, want)
	}
}

func assertKeys(t *testing.T, s exporter.ObjectStore, prefix, startAfter string, want ...string) {
	t.Helper()
	var got []string
	for _, o := range list(t, s, prefix, startAfter) {
		got = append(got, o.Key)
	}
	if !slices.Equal(got, want) {
		if len(got) > 20 || len(want) > 20 {
			t.Errorf("List(%q, %q) returned %d keys, want %d (first difference at %d)", prefix, startAfter, len(got), len(want), firstDiff(got, want))
			return
		}
		t.Errorf("List(%q, %q) = %q, want %q", prefix, startAfter, got, want)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
