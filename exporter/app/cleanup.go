package app

import (
	"context"
	"fmt"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// staleUploadAge is how old an unfinished upload of a cluster must be
// before a run aborts it: far longer than any upload of one day takes, so
// a concurrent run's upload in progress is never touched.
const staleUploadAge = time.Hour

// abortStale removes the unfinished uploads of j's day files that a
// killed run left behind, started before olderThan. It is housekeeping: a failure (a policy without
// s3:ListBucketMultipartUploads, say) is logged and the run goes on.
//
// It lists the partition prefix, which S3 answers with every upload under
// it, and then each day file of the window by its exact key, because some
// S3-compatible servers (MinIO) list uploads only for an exact key. The
// second pass costs one cheap LIST per day and finds nothing more on S3.
func abortStale(ctx context.Context, j job, olderThan, first, last time.Time) {
	jan, ok := j.store.(exporter.UploadJanitor)
	if !ok {
		return
	}
	match := func(key string) bool { _, ok := j.Layout.ParseDay(key); return ok }
	prefixes := []string{j.Layout.PartitionPrefix()}
	for d := first; !d.After(last); d = d.Add(24 * time.Hour) {
		prefixes = append(prefixes, j.Layout.Key(d, j.codec))
	}
	n := 0
	var err error
	for _, p := range prefixes {
		var k int
		if k, err = jan.AbortStale(ctx, p, olderThan, match); err != nil {
			break
		}
		n += k
	}
	if err != nil {
		j.log.Warn("could not clean up unfinished uploads of earlier runs; continuing", "aborted", n, "error", err.Error())
	} else if n > 0 {
		j.log.Info("cleaned up unfinished uploads of earlier runs", "aborted", n)
	}
}

// removeLeftovers deletes the extra objects of days that stay as they are:
// the old-codec file of a codec switch whose delete failed or never ran.
// A failure is only logged; the next run tries again.
func removeLeftovers(ctx context.Context, j job, plan exporter.Plan) {
	for _, d := range plan.Cleanups() {
		if err := deleteKeys(ctx, j, d.Delete); err != nil {
			j.log.Warn("could not remove a leftover file; the next run retries", "day", day(d.Day), "error", err.Error())
		}
	}
}

// deleteKeys removes keys, logging each: deleting data deserves a line.
func deleteKeys(ctx context.Context, j job, keys []string) error {
	for _, k := range keys {
		if err := j.store.Delete(ctx, k); err != nil {
			return fmt.Errorf("delete replaced file: %w", err)
		}
		j.log.Info("deleted replaced file", "key", k)
	}
	return nil
}
