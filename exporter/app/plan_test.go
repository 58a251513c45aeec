package app_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
)

// opStore records the order of Puts and Deletes, and can fail Deletes.
type opStore struct {
	*memStore
	mu        sync.Mutex
	ops       []string
	deleteErr error
}

func (s *opStore) record(op string) {
	s.mu.Lock()
	s.ops = append(s.ops, op)
	s.mu.Unlock()
}

func (s *opStore) Put(ctx context.Context, key string, r io.Reader, meta map[string]string, cond exporter.Precondition) error {
	if err := s.memStore.Put(ctx, key, r, meta, cond); err != nil {
		return err
	}
	s.record("put " + key)
	return nil
}

func (s *opStore) Delete(ctx context.Context, key string) error {
	if s.deleteErr != nil {
		return s.deleteErr
	}
	s.record("delete " + key)
	return s.memStore.Delete(ctx, key)
}

// seed stores a day as an earlier run would have: with a fingerprint
// and the day total it saw.
func seed(t *testing.T, s *memStore, key, fingerprint, total string) {
	t.Helper()
	meta := map[string]string{exporter.MetaFingerprint: fingerprint, exporter.MetaDayTotal: total}
	if err := s.Put(t.Context(), key, strings.NewReader("old\n"), meta, exporter.Precondition{}); err != nil {
		t.Fatal(err)
	}
}

// TestRunReexport covers what Run does with each reason: which days it
// fetches, which files it writes and deletes, and in which order.
func TestRunReexport(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	d0, d1, d2 := days[0], days[1], days[2]
	zstd := func(d time.Time) string { return layout.Key(d, exporter.Zstd) }
	src := func() *memSource {
		return &memSource{
			days:   map[time.Time]fetchFunc{d0: rows("a", 1), d1: rows("b", 1), d2: rows("c", 1)},
			totals: map[time.Time]float64{d0: 100, d1: 200, d2: 300},
		}
	}

	t.Run("config change, drift and current", func(t *testing.T) {
		t.Parallel()
		store := &opStore{memStore: newMemStore()}
		seed(t, store.memStore, key(d0), "another-config", "100")
		seed(t, store.memStore, key(d1), testFingerprint, "190") // Kubecost now says 200: +5 %
		seed(t, store.memStore, key(d2), testFingerprint, "300")
		s := src()
		sum, err := app.Run(t.Context(), options(s, store))
		if err != nil {
			t.Fatal(err)
		}
		if got := dates(s.fetchedDays()); !slices.Equal(got, dates([]time.Time{d0, d1})) {
			t.Errorf("fetched %v, want the config-changed and the drifted day", got)
		}
		reasons := map[string]exporter.Reason{}
		for _, d := range sum.Clusters[0].Plan.Days {
			reasons[d.Day.Format(time.DateOnly)] = d.Reason
		}
		want := map[string]exporter.Reason{dates([]time.Time{d0})[0]: exporter.ReasonConfigChanged,
			dates([]time.Time{d1})[0]: exporter.ReasonDrifted, dates([]time.Time{d2})[0]: exporter.ReasonCurrent}
		for k, v := range want {
			if reasons[k] != v {
				t.Errorf("%s: reason %s, want %s", k, reasons[k], v)
			}
		}
		for d, total := range map[time.Time]string{d0: "100", d1: "200"} {
			obj, _ := store.object(key(d))
			if obj.meta[exporter.MetaFingerprint] != testFingerprint || obj.meta[exporter.MetaDayTotal] != total {
				t.Errorf("%s rewritten with metadata %v", key(d), obj.meta)
			}
		}
		if obj, _ := store.object(key(d2)); names(obj)[0] != "old" {
			t.Errorf("the current day was rewritten")
		}
	})

	t.Run("codec switch writes first, deletes after", func(t *testing.T) {
		t.Parallel()
		store := &opStore{memStore: newMemStore()}
		seed(t, store.memStore, key(d0), testFingerprint, "100")
		o := options(&memSource{days: map[time.Time]fetchFunc{d0: rows("a", 1)}, totals: map[time.Time]float64{d0: 100}}, store)
		o.Codec, o.Clusters[0].Fingerprint = exporter.Zstd, "zstd-config"
		if _, err := app.Run(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		if want := []string{"put " + zstd(d0), "delete " + key(d0)}; !slices.Equal(store.ops, want) {
			t.Errorf("operations %v, want %v", store.ops, want)
		}
		if got := store.keys(); !slices.Equal(got, []string{zstd(d0)}) {
			t.Errorf("stored %v", got)
		}
	})

	t.Run("leftover of an interrupted switch is removed without a fetch", func(t *testing.T) {
		t.Parallel()
		store := &opStore{memStore: newMemStore()}
		seed(t, store.memStore, key(d0), testFingerprint, "100")
		seed(t, store.memStore, zstd(d0), "zstd-config", "100")
		s := &memSource{days: map[time.Time]fetchFunc{d0: rows("a", 1)}, totals: map[time.Time]float64{d0: 100}}
		o := options(s, store)
		o.Codec, o.Clusters[0].Fingerprint = exporter.Zstd, "zstd-config"
		if _, err := app.Run(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		if len(s.fetchedDays()) != 0 || !slices.Equal(store.ops, []string{"delete " + key(d0)}) {
			t.Errorf("fetched %v, operations %v; want only the leftover deleted", s.fetchedDays(), store.ops)
		}
	})

	t.Run("dry run deletes nothing", func(t *testing.T) {
		t.Parallel()
		store := &opStore{memStore: newMemStore()}
		seed(t, store.memStore, key(d0), testFingerprint, "100")
		seed(t, store.memStore, zstd(d0), "zstd-config", "100")
		o := options(&memSource{days: map[time.Time]fetchFunc{d0: rows("a", 1)}, totals: map[time.Time]float64{d0: 100}}, store)
		o.Codec, o.Clusters[0].Fingerprint, o.DryRun = exporter.Zstd, "zstd-config", true
		if _, err := app.Run(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		if len(store.ops) != 0 {
			t.Errorf("dry run made %v", store.ops)
		}
	})

	t.Run("a failed delete keeps the new file, which counts as written", func(t *testing.T) {
		t.Parallel()
		store := &opStore{memStore: newMemStore(), deleteErr: errors.New("AccessDenied")}
		seed(t, store.memStore, key(d0), testFingerprint, "100")
		o := options(&memSource{days: map[time.Time]fetchFunc{d0: rows("a", 1)}, totals: map[time.Time]float64{d0: 100}}, store)
		o.Codec, o.Clusters[0].Fingerprint = exporter.Zstd, "zstd-config"
		sum, err := app.Run(t.Context(), o)
		if !errors.Is(err, app.ErrCleanupFailed) || errors.Is(err, app.ErrDaysFailed) || !strings.Contains(err.Error(), "AccessDenied") {
			t.Errorf("err %v, want a failed clean-up naming the delete error and no failed day", err)
		}
		if n, _, _ := sum.Written(); n != 1 || len(sum.Failed()) != 0 || sum.CleanupsFailed() != 1 {
			t.Errorf("written %d, failed %d, clean-ups failed %d; want 1, 0, 1", n, len(sum.Failed()), sum.CleanupsFailed())
		}
		if got := store.keys(); !slices.Equal(got, []string{key(d0), zstd(d0)}) {
			t.Errorf("stored %v, want the new file and the undeleted old one", got)
		}
	})
}
