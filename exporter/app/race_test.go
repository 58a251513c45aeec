package app_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
)

// racingStore lets another writer store key just before the run's Put.
type racingStore struct {
	*memStore
	key string
}

func (s *racingStore) Put(ctx context.Context, key string, r io.Reader, meta map[string]string, cond exporter.Precondition) error {
	if key == s.key {
		if err := s.memStore.Put(ctx, key, strings.NewReader("the other run's file"), nil, exporter.Precondition{}); err != nil {
			return err
		}
	}
	return s.memStore.Put(ctx, key, r, meta, cond)
}

// TestRunLostRace: a new day is created only if absent, a forced day
// replaces only the version seen when planning. When another writer gets
// there first the day counts as done, the run succeeds, and the other
// writer's object stays.
func TestRunLostRace(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	for _, forced := range []bool{false, true} {
		src := &memSource{days: map[time.Time]fetchFunc{days[0]: rows("a", 1), days[1]: rows("b", 1)}}
		store := &racingStore{memStore: newMemStore(), key: key(days[0])}
		o := options(src, store)
		if forced {
			if err := store.memStore.Put(t.Context(), key(days[0]), strings.NewReader("listed when planning"), nil, exporter.Precondition{}); err != nil {
				t.Fatal(err)
			}
			o.ForceDays = []time.Time{days[0]}
		}
		sum, err := app.Run(t.Context(), o)
		if err != nil {
			t.Fatalf("forced=%v: %v", forced, err)
		}
		written, _, _ := sum.Written()
		if sum.Lost() != 1 || written != 1 {
			t.Errorf("forced=%v: %d lost, %d written; want 1 and 1", forced, sum.Lost(), written)
		}
		if o, _ := store.object(key(days[0])); string(o.data) != "the other run's file" {
			t.Errorf("forced=%v: the run overwrote the other writer's object with %q", forced, o.data)
		}
	}
}
