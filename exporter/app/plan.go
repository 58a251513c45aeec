package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Reexport is how a run treats days already stored, whose objects carry the config
// fingerprint (Cluster.Fingerprint) they were written with.
type Reexport struct {
	OnConfigChange bool    // REEXPORT_ON_CONFIG_CHANGE
	DriftTolerance float64 // DRIFT_TOLERANCE, relative
	Legacy         bool    // REEXPORT_LEGACY
}

// headConcurrency bounds planning's HeadObject calls: enough to hide S3's latency for a
// window of days, few enough not to be throttled.
const headConcurrency = 8

// planAll plans every cluster from Kubecost's days, listing each account/region prefix once
// for all its clusters. A cluster that cannot be planned (its prefix denied, say) gets each
// of its available days as a failed day, so the next run resumes them.
func planAll(ctx context.Context, o *Options, jobs []job, avail map[string][]exporter.DayTotal, sum *Summary, now, first, last time.Time) {
	look := o.LookBack(now)
	listings := map[string][]string{}
	listErrs := map[string]error{}
	for _, j := range jobs {
		prefix := j.Layout.PartitionPrefix()
		if _, done := listings[prefix]; !done && listErrs[prefix] == nil {
			keys, err := listPartition(ctx, j.store, j.Layout, look, ofRun(jobs, prefix))
			if err != nil {
				listErrs[prefix] = err
			} else {
				listings[prefix] = keys
			}
		}
	}
	o.extendAvailability(ctx, jobs, listings, avail, now, first)
	for i, j := range jobs {
		prefix := j.Layout.PartitionPrefix()
		available := avail[j.ID]
		plan, err := exporter.Plan{}, listErrs[prefix]
		if err == nil {
			plan, err = planFrom(ctx, j, exporter.PlanInput{Now: now, BackfillDays: o.BackfillDays, Settle: o.Settle, Available: available, Backlog: o.Backlog},
				look, first, last, listings[prefix])
		}
		c := &sum.Clusters[i]
		if err != nil {
			c.PlanErr = err
			j.log.Error("cannot plan this cluster; its days will be retried by the next run", "error", err.Error())
			for _, d := range available {
				c.Days = append(c.Days, DayResult{Cluster: j.ID, Day: d.Day, Err: fmt.Errorf("plan: %w", err)})
			}
			continue
		}
		c.Plan = plan
		logPlan(j.log, plan, j.Fingerprint)
	}
}

// ofRun reports whether a key of prefix may be a day file of the run's clusters
// (<YYYY-MM-DD>_<cluster>.<codec>.parquet; cluster names hold no dot), so that a listing a
// year back grows with the run's days, not everything under the prefix. planFrom parses each.
func ofRun(jobs []job, prefix string) func(string) bool {
	names := map[string]bool{}
	for _, j := range jobs {
		if j.Layout.PartitionPrefix() == prefix {
			names[j.Layout.Cluster] = true
		}
	}
	const dateLen = len(time.DateOnly)
	return func(key string) bool {
		name := key[strings.LastIndexByte(key, '/')+1:]
		if len(name) < dateLen+1 || name[dateLen] != '_' {
			return false
		}
		cluster, _, _ := strings.Cut(name[dateLen+1:], ".")
		return names[cluster]
	}
}

// listPartition lists the keys keep accepts of layout's account and region, from first's month.
func listPartition(ctx context.Context, store exporter.ObjectStore, layout exporter.Layout, first time.Time, keep func(string) bool) ([]string, error) {
	var keys []string
	prefix := layout.PartitionPrefix()
	err := store.List(ctx, prefix, layout.MonthPrefix(first), func(oi exporter.ObjectInfo) error {
		if keep(oi.Key) {
			keys = append(keys, oi.Key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list existing files under %s: %w", prefix, err)
	}
	return keys, nil
}

// planFrom plans j's cluster from in and the keys listed from look on. Only the window's
// objects are HEAD: before the window a day is exported only when missing, as listed.
func planFrom(ctx context.Context, j job, in exporter.PlanInput, look, first, last time.Time, listed []string) (exporter.Plan, error) {
	var stored, older []exporter.StoredObject
	for _, k := range listed {
		// Only this cluster's keys, of days the run looks at.
		d, c, ok := j.Layout.ParseKey(k)
		switch {
		case !ok || d.Before(look) || d.After(last):
		case d.Before(first):
			older = append(older, exporter.StoredObject{Key: k, Day: d, Codec: c})
		default:
			stored = append(stored, exporter.StoredObject{Key: k, Day: d, Codec: c})
		}
	}
	stored, err := headAll(ctx, j.store, stored)
	if err != nil {
		return exporter.Plan{}, err
	}
	j.log.Debug("stored objects", "listed_keys", len(listed), "this_cluster_in_window", len(stored), "this_cluster_before_window", len(older))
	in.Stored, in.Layout, in.Policy = append(stored, older...), j.Layout, j.policy
	return exporter.PlanDays(in), nil
}

// headAll fills in every object's attributes, headConcurrency at a time, dropping those
// deleted since the listing.
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

// logPlan logs a summary line and one line per available day with its reason, so that every
// decision can be read back from the logs.
func logPlan(log *slog.Logger, plan exporter.Plan, fingerprint string) {
	exports := plan.Exports()
	toExport := make([]string, len(exports))
	for i, d := range exports {
		toExport[i] = day(d.Day)
	}
	counts := map[exporter.Reason]int{}
	for _, d := range plan.Days {
		counts[d.Reason]++
	}
	attrs := []any{"available", days(plan.Available), "already_stored", days(plan.Present), "to_export", toExport,
		"config_fingerprint", fingerprint}
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
