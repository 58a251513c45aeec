// Package app runs one export: plan the missing days, then fetch, encode
// and upload each. It sees Kubecost and the bucket only through the
// domain interfaces, so tests can run it against the simulator and any store.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Options wires one run.
type Options struct {
	Source       exporter.AllocationSource
	Store        exporter.ObjectStore
	Layout       exporter.Layout
	Codec        exporter.Codec
	NewEncoder   EncoderFactory
	Projection   *schema.Projection
	BackfillDays int
	Settle       time.Duration // a day is exported once it ended this long ago (SETTLE_HOURS; CCA's is exporter.DefaultSettle)
	Concurrency  int           // days exported at once; <1 means 1
	ForceDays    []time.Time   // exported again even when present
	DryRun       bool
	Reexport     Reexport         // what to do with days already stored
	Now          func() time.Time // nil: time.Now
	// WallClock dates the clean-up of abandoned uploads, which compares
	// with the server's clock rather than the plan's; nil: time.Now.
	WallClock func() time.Time
	Metadata  map[string]string // added to every object's metadata
	Logger    *slog.Logger      // nil: discard
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WallClock == nil {
		o.WallClock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// DayResult is what happened to one day.
type DayResult struct {
	Day      time.Time
	Key      string
	Reason   exporter.Reason
	Rows     int64
	Bytes    int64
	Duration time.Duration
	// Lost is set when another run wrote the day first (a failed
	// precondition): the day is done, but not by this run.
	Lost bool
	Err  error
}

// Summary is the outcome of a run; its fields are the run's last log line.
type Summary struct {
	Plan     exporter.Plan
	Days     []DayResult // in day order
	Duration time.Duration
}

// Written counts the days uploaded successfully.
func (s Summary) Written() (days int, rows, bytes int64) {
	for _, d := range s.Days {
		if d.Err == nil && !d.Lost {
			days++
			rows += d.Rows
			bytes += d.Bytes
		}
	}
	return days, rows, bytes
}

// Lost counts the days another run wrote first.
func (s Summary) Lost() int {
	n := 0
	for _, d := range s.Days {
		if d.Lost {
			n++
		}
	}
	return n
}

// Failed returns the days that failed.
func (s Summary) Failed() []DayResult {
	return slices.DeleteFunc(slices.Clone(s.Days), func(d DayResult) bool { return d.Err == nil })
}

// ErrDaysFailed is returned when at least one day could not be exported.
// Days that succeeded stay uploaded; the next run retries the rest.
var ErrDaysFailed = errors.New("some days failed")

// Run plans and exports. It returns an error wrapping ErrDaysFailed when a
// day failed, or the error that stopped planning.
func Run(ctx context.Context, o Options) (sum Summary, err error) {
	o = o.withDefaults()
	start := time.Now()
	log := o.Logger
	defer func() { sum.Duration = time.Since(start) }()

	// One reading of the clock: a run that straddles midnight must plan
	// against the same window it asked Kubecost about.
	now := o.Now()
	first, last := exporter.Window(now, o.BackfillDays, o.Settle)
	if last.Before(first) {
		sum.Plan = exporter.Plan{First: first, Last: last}
		log.Warn("the backfill window holds no settled day: nothing to export; raise BACKFILL_PERIOD_DAYS or lower SETTLE_HOURS",
			"backfill_days", o.BackfillDays, "settle_hours", o.Settle.Hours(), "window_start", day(first), "window_end_exclusive", day(last.Add(24*time.Hour)))
		return sum, nil
	}
	log.Info("planning", "window_first", day(first), "window_last", day(last), "backfill_days", o.BackfillDays,
		"settle_hours", o.Settle.Hours(), "config_fingerprint", o.Reexport.Fingerprint)

	if !o.DryRun {
		abortStale(ctx, o, first, last)
	}
	plan, err := makePlan(ctx, o, now, first, last)
	if err != nil {
		return sum, err
	}
	sum.Plan = plan
	logPlan(log, plan)

	if len(plan.Available) == 0 {
		log.Warn("Kubecost has no data for the backfill window; nothing available to export",
			"window_first", day(first), "window_last", day(last))
		return sum, nil
	}
	if o.DryRun {
		logDryRun(log, plan)
		return sum, nil
	}
	removeLeftovers(ctx, o, plan)
	exports := plan.Exports()
	if len(exports) == 0 {
		log.Info("nothing to do: every available day is stored and current")
		return sum, nil
	}

	sum.Days = exportTasks(ctx, tasksOf(o, exports), o.Concurrency)
	if failed := sum.Failed(); len(failed) > 0 {
		return sum, fmt.Errorf("%w: %d of %d (first: %s: %w)", ErrDaysFailed, len(failed), len(sum.Days), day(failed[0].Day), failed[0].Err)
	}
	return sum, nil
}

// task is one day to export with the options of its cluster.
type task struct {
	o      Options
	dp     exporter.DayPlan
	member int // index of the cluster in a fleet run
}

func tasksOf(o Options, dps []exporter.DayPlan) []task {
	out := make([]task, len(dps))
	for i, dp := range dps {
		out[i] = task{o: o, dp: dp}
	}
	return out
}

// exportTasks exports the tasks in order with at most concurrency at once.
// A failed day does not stop the others: each uploaded day is progress the
// next run keeps.
func exportTasks(ctx context.Context, tasks []task, concurrency int) []DayResult {
	n := max(concurrency, 1)
	results := make([]DayResult, len(tasks))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n, len(tasks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = exportDay(ctx, tasks[i].o, tasks[i].dp, i+1, len(tasks))
			}
		}()
	}
	for i, t := range tasks {
		if ctx.Err() != nil {
			results[i] = DayResult{Day: t.dp.Day, Key: t.dp.Key, Reason: t.dp.Reason, Err: ctx.Err()}
			continue
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

func exportDay(ctx context.Context, o Options, dp exporter.DayPlan, n, total int) (res DayResult) {
	start := time.Now()
	d := dp.Day
	res = DayResult{Day: d, Key: dp.Key, Reason: dp.Reason}
	// A worker may pick a day up just after the run was cancelled.
	if err := ctx.Err(); err != nil {
		res.Err = err
		return res
	}
	log := o.Logger.With("day", day(d), "key", res.Key)
	log.Info("exporting day", "reason", string(dp.Reason), "progress", fmt.Sprintf("%d/%d", n, total))
	defer func() {
		res.Duration = time.Since(start)
		if res.Err != nil {
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
	rows, size, err := spoolDay(ctx, o, d, f)
	if err != nil {
		res.Err = err
		return res
	}
	meta := dayMetadata(o, dp, rows)
	// A new day is created only if absent; a replacement only over the
	// version seen when planning. Either way a run that planned against an
	// older state never overwrites newer work.
	cond := exporter.CreateOnly
	if dp.ETag != "" {
		cond = exporter.ReplaceOnly(dp.ETag)
	}
	if err := o.Store.Put(ctx, res.Key, f, meta, cond); errors.Is(err, exporter.ErrPreconditionFailed) {
		res.Lost = true
		log.Info("another run wrote this day first; counting it as done", "duration", time.Since(start).Round(time.Millisecond).String())
		return res
	} else if err != nil {
		res.Err = fmt.Errorf("upload: %w", err)
		return res
	}
	res.Rows, res.Bytes = rows, size
	log.Info("day written", "reason", string(dp.Reason), "rows", rows, "bytes", size, "duration", time.Since(start).Round(time.Millisecond).String())
	// Only now that the new object is whole may the old ones go: a crash
	// before this leaves one extra file, which the next run removes.
	if err := deleteKeys(ctx, o, dp.Delete); err != nil {
		res.Err = err
	}
	return res
}

// spoolDay fetches day d into f as a whole Parquet file and rewinds f for
// the upload. It returns the rows and the file's size.
func spoolDay(ctx context.Context, o Options, d time.Time, f *os.File) (rows, size int64, err error) {
	sink, err := newDaySink(f, o.Projection, o.NewEncoder)
	if err != nil {
		return 0, 0, fmt.Errorf("start parquet file: %w", err)
	}
	if err := o.Source.FetchDay(ctx, d, sink); err != nil {
		sink.abort()
		return 0, 0, fmt.Errorf("fetch: %w", err)
	}
	if rows, err = sink.Close(); err != nil {
		return 0, 0, err
	}
	if rows == 0 {
		return 0, 0, errors.New("the day was reported available but Kubecost returned no allocations")
	}
	if size, err = f.Seek(0, io.SeekEnd); err != nil {
		return 0, 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	return rows, size, nil
}

// dayMetadata is the user metadata of the object holding dp's day: the
// run's own metadata, how the file was made, and what planning saw.
func dayMetadata(o Options, dp exporter.DayPlan, rows int64) map[string]string {
	meta := maps.Clone(o.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[exporter.MetaRows] = strconv.FormatInt(rows, 10)
	meta["window-start"] = dp.Day.UTC().Format(time.RFC3339)
	meta["window-end"] = dp.Day.Add(24 * time.Hour).UTC().Format(time.RFC3339)
	meta["schema-version"] = schema.Version
	meta[exporter.MetaExporterVersion] = exporter.Version
	addPlanMetadata(meta, o, dp)
	return meta
}

// staleUploadAge is how old an unfinished upload of this cluster must be
// before a run aborts it: far longer than any upload of one day takes, so
// a concurrent run's upload in progress is never touched.
const staleUploadAge = time.Hour

// abortStale removes the unfinished uploads of this cluster's day files
// that a killed run left behind. It is housekeeping: a failure (a policy
// without s3:ListBucketMultipartUploads, say) is logged and the run goes on.
//
// It lists the partition prefix, which S3 answers with every upload under
// it, and then each day file of the window by its exact key, because some
// S3-compatible servers (MinIO) list uploads only for an exact key. The
// second pass costs one cheap LIST per day and finds nothing more on S3.
func abortStale(ctx context.Context, o Options, first, last time.Time) {
	j, ok := o.Store.(exporter.UploadJanitor)
	if !ok {
		return
	}
	olderThan := o.WallClock().Add(-staleUploadAge)
	match := func(key string) bool { _, ok := o.Layout.ParseDay(key); return ok }
	prefixes := []string{o.Layout.PartitionPrefix()}
	for d := first; !d.After(last); d = d.Add(24 * time.Hour) {
		prefixes = append(prefixes, o.Layout.Key(d, o.Codec))
	}
	n := 0
	var err error
	for _, p := range prefixes {
		var k int
		if k, err = j.AbortStale(ctx, p, olderThan, match); err != nil {
			break
		}
		n += k
	}
	if err != nil {
		o.Logger.Warn("could not clean up unfinished uploads of earlier runs; continuing", "aborted", n, "error", err.Error())
	} else if n > 0 {
		o.Logger.Info("cleaned up unfinished uploads of earlier runs", "aborted", n)
	}
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

func days(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = day(t)
	}
	return out
}
