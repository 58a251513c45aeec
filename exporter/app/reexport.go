package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Reexport is how a run treats days that are already stored.
type Reexport struct {
	// Fingerprint of the current config (exporter.Fingerprint); written into
	// every object, compared with every stored one.
	Fingerprint    string
	OnConfigChange bool    // REEXPORT_ON_CONFIG_CHANGE
	DriftTolerance float64 // DRIFT_TOLERANCE, relative
	Legacy         bool    // REEXPORT_LEGACY
}

// headConcurrency bounds the HeadObject calls of planning: enough to hide
// S3's latency for a window of days, few enough not to be throttled.
const headConcurrency = 8

// makePlan gathers what PlanDays decides from: Kubecost's days with their
// totals, this cluster's stored objects in the window and their metadata.
func makePlan(ctx context.Context, o Options, now, first, last time.Time) (exporter.Plan, error) {
	available, err := o.Source.AvailableDays(ctx, first, last.Add(24*time.Hour))
	if err != nil {
		return exporter.Plan{}, fmt.Errorf("ask Kubecost for available days: %w", err)
	}
	listed, err := listPartition(ctx, o.Store, o.Layout, first)
	if err != nil {
		return exporter.Plan{}, err
	}
	return planFrom(ctx, o, now, first, last, available, listed)
}

// listPartition lists the keys of layout's account and region from the
// month of first on: every cluster of that prefix shares the listing.
func listPartition(ctx context.Context, store exporter.ObjectStore, layout exporter.Layout, first time.Time) ([]string, error) {
	var keys []string
	prefix := layout.PartitionPrefix()
	err := store.List(ctx, prefix, layout.MonthPrefix(first), func(oi exporter.ObjectInfo) error {
		keys = append(keys, oi.Key)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list existing files under %s: %w", prefix, err)
	}
	return keys, nil
}

// planFrom plans o's cluster from Kubecost's days and the listed keys.
func planFrom(ctx context.Context, o Options, now, first, last time.Time, available []exporter.DayTotal, listed []string) (exporter.Plan, error) {
	var stored []exporter.StoredObject
	for _, k := range listed {
		// Only this cluster's keys, and only days of the window, are looked
		// at further: other clusters' objects are none of our business.
		if d, c, ok := o.Layout.ParseKey(k); ok && !d.Before(first) && !d.After(last) {
			stored = append(stored, exporter.StoredObject{Key: k, Day: d, Codec: c})
		}
	}
	stored, err := headAll(ctx, o.Store, stored)
	if err != nil {
		return exporter.Plan{}, err
	}
	o.Logger.Debug("stored objects", "listed_keys", len(listed), "this_cluster_in_window", len(stored))
	return exporter.PlanDays(exporter.PlanInput{
		Now: now, BackfillDays: o.BackfillDays, Settle: o.Settle,
		Available: available, Stored: stored, Layout: o.Layout,
		Policy: exporter.Policy{
			Fingerprint: o.Reexport.Fingerprint, Codec: o.Codec,
			ReexportOnConfigChange: o.Reexport.OnConfigChange, DriftTolerance: o.Reexport.DriftTolerance,
			ReexportLegacy: o.Reexport.Legacy, Force: o.ForceDays,
		},
	}), nil
}

// headAll fills in the attributes of every object, headConcurrency at a
// time. An object deleted since the listing is dropped.
func headAll(ctx context.Context, store exporter.ObjectStore, objs []exporter.StoredObject) ([]exporter.StoredObject, error) {
	errs := make([]error, len(objs))
	gone := make([]bool, len(objs))
	sem := make(chan struct{}, headConcurrency)
	var wg sync.WaitGroup
	for i := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			a, err := store.Head(ctx, objs[i].Key)
			switch {
			case errors.Is(err, exporter.ErrNotExist):
				gone[i] = true
			case err != nil:
				errs[i] = err
			default:
				objs[i].Attrs = a
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("read the metadata of stored days: %w", err)
	}
	out := objs[:0]
	for i, o := range objs {
		if !gone[i] {
			out = append(out, o)
		}
	}
	return out, nil
}

// logPlan logs one summary line and one line per available day with its
// reason, so that every decision can be read back from the logs.
func logPlan(log *slog.Logger, plan exporter.Plan) {
	exports := plan.Exports()
	toExport := make([]string, len(exports))
	for i, d := range exports {
		toExport[i] = day(d.Day)
	}
	counts := map[exporter.Reason]int{}
	for _, d := range plan.Days {
		counts[d.Reason]++
	}
	attrs := []any{"available", days(plan.Available), "already_stored", days(plan.Present), "to_export", toExport}
	for _, r := range []exporter.Reason{exporter.ReasonMissing, exporter.ReasonConfigChanged, exporter.ReasonDrifted,
		exporter.ReasonForced, exporter.ReasonLegacyReplaced, exporter.ReasonLegacyKept, exporter.ReasonCurrent} {
		if counts[r] > 0 {
			attrs = append(attrs, string(r), counts[r])
		}
	}
	log.Info("plan", attrs...)
	for _, d := range plan.Days {
		attrs := []any{"day", day(d.Day), "reason", string(d.Reason), "export", d.Export, "key", d.Key,
			"kubecost_total", exporter.FormatTotal(d.Total)}
		if d.Detail != "" {
			attrs = append(attrs, "detail", d.Detail)
		}
		if len(d.Delete) > 0 {
			attrs = append(attrs, "delete", d.Delete)
		}
		log.Info("plan day", attrs...)
	}
}

// logDryRun says what a real run would change; DRY_RUN changes nothing.
func logDryRun(log *slog.Logger, plan exporter.Plan) {
	n := 0
	for _, d := range plan.Days {
		if d.Export {
			n++
			log.Info("dry run: would export", "day", day(d.Day), "reason", string(d.Reason), "key", d.Key, "then_delete", d.Delete)
		} else if len(d.Delete) > 0 {
			log.Info("dry run: would delete leftovers", "day", day(d.Day), "reason", string(d.Reason), "delete", d.Delete)
		}
	}
	if n == 0 {
		log.Info("dry run: nothing to export")
	}
}

// removeLeftovers deletes the extra objects of days that stay as they are:
// the old-codec file of a codec switch that died before its delete. A
// failure is only logged; the next run tries again.
func removeLeftovers(ctx context.Context, o Options, plan exporter.Plan) {
	for _, d := range plan.Cleanups() {
		if err := deleteKeys(ctx, o, d.Delete); err != nil {
			o.Logger.Warn("could not remove a leftover file; the next run retries", "day", day(d.Day), "error", err.Error())
		}
	}
}

// deleteKeys removes keys, logging each: deleting data deserves a line.
func deleteKeys(ctx context.Context, o Options, keys []string) error {
	for _, k := range keys {
		if err := o.Store.Delete(ctx, k); err != nil {
			return fmt.Errorf("delete replaced file: %w", err)
		}
		o.Logger.Info("deleted replaced file", "key", k)
	}
	return nil
}

// addPlanMetadata records how the object was made: the config fingerprint
// and Kubecost's day total, which the next runs compare against.
func addPlanMetadata(meta map[string]string, o Options, dp exporter.DayPlan) {
	meta[exporter.MetaFingerprint] = o.Reexport.Fingerprint
	meta[exporter.MetaDayTotal] = exporter.FormatTotal(dp.Total)
}
