package app

import (
	"context"
	"fmt"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// staleUploadAge is the age at which a run aborts an unfinished upload: far longer than a
// day's upload takes, so a concurrent run's upload is never touched.
const staleUploadAge = time.Hour

// abortStale removes the unfinished uploads of j's day files a killed run left, started
// before olderThan. A failure (no s3:ListBucketMultipartUploads, say) is only logged.
//
// It lists the partition prefix (S3 answers every upload under it), then each day file of
// the window by exact key, as some S3-compatible servers (MinIO) list uploads only for an
// exact key: one cheap LIST per day that finds nothing more on S3.
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

// removeLeftovers deletes the extra objects of days that stay as they are: the old-codec file
// of a codec switch whose delete failed or never ran. A failure is only logged.
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
