package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// task is one day of one cluster to export.
type task struct {
	job
	dp      exporter.DayPlan
	cluster int // index of the cluster in the run
}

// exportTasks exports the tasks in order with at most concurrency at once. A failed day does
// not stop the others (each uploaded day is progress the next run keeps), except with
// exporter.ErrServerUnsupported: every other day would fail the same, so each carries it.
//
// Before each task but the first it asks budget whether to go on; once it says why not
// (stop), the rest are left for the next run, and the results cover the tasks started.
func exportTasks(ctx context.Context, tasks []task, concurrency int, budget func(started int) string) (results []DayResult, stop string) {
	results = make([]DayResult, len(tasks))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(concurrency, 1), len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = exportDay(ctx, tasks[i].job, tasks[i].dp, i+1, len(tasks))
				if errors.Is(results[i].Err, exporter.ErrServerUnsupported) {
					cancel(results[i].Err)
				}
			}
		}()
	}
	started := len(tasks)
	for i, t := range tasks {
		if ctx.Err() != nil {
			results[i] = DayResult{Cluster: t.ID, Day: t.dp.Day, Key: t.dp.Key, Reason: t.dp.Reason, Err: context.Cause(ctx)}
			continue
		}
		// A cancelled run's days fail above; only a live one's are left by its budget.
		if i > 0 && budget != nil {
			if stop = budget(i); stop != "" {
				started = i
				break
			}
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results[:started], stop
}

func exportDay(ctx context.Context, j job, dp exporter.DayPlan, n, total int) (res DayResult) {
	start := time.Now()
	d := dp.Day
	res = DayResult{Cluster: j.ID, Day: d, Key: dp.Key, Reason: dp.Reason}
	// A worker may pick a day up just after the run was cancelled.
	if ctx.Err() != nil {
		res.Err = context.Cause(ctx)
		return res
	}
	log := j.log.With("day", day(d), "key", res.Key)
	log.Info("exporting day", "reason", string(dp.Reason), "progress", fmt.Sprintf("%d/%d", n, total))
	defer func() {
		res.Duration = time.Since(start)
		switch {
		case errors.Is(res.Err, exporter.ErrServerUnsupported):
			log.Error("day failed: the server cannot answer this run's queries, so the run stops; "+
				"the next run fails the same until the server or the setting the error names changes",
				"error", res.Err.Error(), "duration", res.Duration.Round(time.Millisecond).String())
		case res.Err != nil:
			log.Error("day failed; it will be retried by the next run", "error", res.Err.Error(), "duration", res.Duration.Round(time.Millisecond).String())
		}
	}()

	f, err := os.CreateTemp("", "kubecost-s3-exporter-*.parquet")
	if err != nil {
		res.Err = fmt.Errorf("create spool file: %w", err)
		return res
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	rows, size, err := spoolDay(ctx, j, d, f)
	if err != nil {
		res.Err = err
		return res
	}
	meta := dayMetadata(j, dp, rows)
	// Create only if absent, replace only the version planned over: a run that planned
	// against an older state never overwrites newer work.
	cond := exporter.CreateOnly
	if dp.ETag != "" {
		cond = exporter.ReplaceOnly(dp.ETag)
	}
	if err := j.store.Put(ctx, res.Key, f, meta, cond); errors.Is(err, exporter.ErrPreconditionFailed) {
		res.Lost = true
		log.Info("another run wrote this day first; counting it as done", "duration", time.Since(start).Round(time.Millisecond).String())
		return res
	} else if err != nil {
		res.Err = fmt.Errorf("upload: %w", err)
		return res
	}
	res.Rows, res.Bytes = rows, size
	log.Info("day written", "reason", string(dp.Reason), "rows", rows, "bytes", size, "duration", time.Since(start).Round(time.Millisecond).String())
	// Only now that the new object is whole may the old ones go: a crash or a failed delete
	// leaves one extra file, which the next run removes.
	if err := deleteKeys(ctx, j, dp.Delete); err != nil {
		res.CleanupErr = err
		log.Warn("day written, but the file it replaces could not be deleted; the next run removes it", "error", err.Error())
	}
	return res
}

// spoolDay fetches day d into f as a whole Parquet file and rewinds f for the upload.
func spoolDay(ctx context.Context, j job, d time.Time, f *os.File) (rows, size int64, err error) {
	sink, err := newDaySink(f, j.Projection, j.NewEncoder)
	if err != nil {
		return 0, 0, fmt.Errorf("start parquet file: %w", err)
	}
	if err := j.Source.FetchDay(ctx, d, sink); err != nil {
		sink.abort()
		return 0, 0, fmt.Errorf("fetch: %w", err)
	}
	if rows, err = sink.Close(); err != nil {
		return 0, 0, err
	}
	if rows == 0 {
		return 0, 0, errors.New("the day was reported available but the server returned no allocations")
	}
	if size, err = f.Seek(0, io.SeekEnd); err != nil {
		return 0, 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	return rows, size, nil
}

// dayMetadata is the user metadata of dp's object: the cluster's own, how the file was made,
// and what planning saw.
func dayMetadata(j job, dp exporter.DayPlan, rows int64) map[string]string {
	meta := maps.Clone(j.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[exporter.MetaRows] = strconv.FormatInt(rows, 10)
	meta["window-start"] = dp.Day.UTC().Format(time.RFC3339)
	meta["window-end"] = dp.Day.Add(24 * time.Hour).UTC().Format(time.RFC3339)
	meta["schema-version"] = schema.Version
	meta[exporter.MetaExporterVersion] = exporter.Version
	// How the object was made: the next runs compare against these.
	meta[exporter.MetaFingerprint] = j.Fingerprint
	meta[exporter.MetaDayTotal] = exporter.FormatTotal(dp.Total)
	return meta
}
