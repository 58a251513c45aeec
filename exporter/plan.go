package exporter

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
)

// Reason says why a day is, or is not, exported.
type Reason string

// Reasons in the plan log. Only missing, config-changed, drifted, forced
// and legacy-replaced export the day.
const (
	ReasonMissing        Reason = "missing"         // no object for the day
	ReasonConfigChanged  Reason = "config-changed"  // made with another config fingerprint
	ReasonDrifted        Reason = "drifted"         // Kubecost's day total moved beyond the tolerance
	ReasonForced         Reason = "forced"          // listed in FORCE_DATES
	ReasonLegacyReplaced Reason = "legacy-replaced" // no metadata of ours, and REEXPORT_LEGACY=true
	ReasonLegacyKept     Reason = "legacy-kept"     // no metadata of ours: written by CCA or by hand
	ReasonCurrent        Reason = "current"         // stored and still right
)

// Object metadata keys the plan reads (the exporter writes them).
const (
	MetaFingerprint     = "config-fingerprint" // Fingerprint of the config that made the file
	MetaDayTotal        = "kubecost-day-total" // DayTotal.TotalCost when the day was exported
	MetaRows            = "rows"
	MetaExporterVersion = "exporter-version" // on every object of ours, also pre-fingerprint ones
)

// writtenByUs tells our objects from CCA's or hand-made ones. An object of an earlier
// version of ours has no fingerprint: it counts as made with another config, so an upgrade
// gets the new columns in every day Kubecost still has instead of a legacy-kept archive.
func writtenByUs(a ObjectAttrs) bool {
	return a.Metadata[MetaFingerprint] != "" || a.Metadata[MetaExporterVersion] != ""
}

// StoredObject is one object of this cluster, with what Head said of it.
type StoredObject struct {
	Key   string
	Day   time.Time
	Codec Codec
	Attrs ObjectAttrs
}

// Policy is how a run treats days that are already stored.
type Policy struct {
	Fingerprint            string // of the current config
	Codec                  Codec  // of the current config: new files get this suffix
	ReexportOnConfigChange bool
	DriftTolerance         float64 // relative, 0.001 = 0.1 %
	ReexportLegacy         bool
	Force                  []time.Time // FORCE_DATES
}

// PlanInput is everything PlanDays decides from.
type PlanInput struct {
	Now          time.Time
	BackfillDays int
	Settle       time.Duration
	Available    []DayTotal     // Kubecost's days with their totals
	Stored       []StoredObject // this cluster's objects; those outside the window are ignored
	Layout       Layout
	Policy
	Backlog // past the window (BacklogFrom); the zero value keeps to the window
}

// DayPlan is the decision for one day Kubecost has.
type DayPlan struct {
	Day    time.Time
	Reason Reason
	Export bool
	Key    string  // the key the day is (or would be) written to
	Total  float64 // Kubecost's day total now
	// ETag of the object at Key when planning, or "": a replacement is conditional on it.
	ETag string
	// Delete lists keys of the same day to remove: after the new object is written when
	// Export, right away otherwise (leftovers of an interrupted codec switch).
	Delete []string
	Detail string // why, in words, when the reason alone does not say
}

// Plan is the outcome of comparing Kubecost with the bucket.
type Plan struct {
	First, Last time.Time // the backfill window, inclusive; Last before First when empty
	// From is the first day the plan looks at: First, or older in the backlog (BacklogFrom).
	// Days in [From, First) are exported only when missing.
	From      time.Time
	Available []time.Time // days Kubecost has, from From to Last
	Present   []time.Time // days of this cluster already stored, from From to Last
	Days      []DayPlan   // one per available day, oldest first
}

// inScope reports whether d is in the window or the backlog before it.
func (p Plan) inScope(d time.Time) bool { return !d.Before(p.From) && !d.After(p.Last) }

// Exports returns the days to export, oldest first.
func (p Plan) Exports() []DayPlan {
	return slices.DeleteFunc(slices.Clone(p.Days), func(d DayPlan) bool { return !d.Export })
}

// Cleanups returns the days kept as they are that still have keys to delete.
func (p Plan) Cleanups() []DayPlan {
	return slices.DeleteFunc(slices.Clone(p.Days), func(d DayPlan) bool { return d.Export || len(d.Delete) == 0 })
}

// PlanDays decides, for every day Kubecost has inside the window, whether to export it and
// why; it is pure. Other clusters' objects never reach it (Layout.ParseKey rejects them); a day
// stored with any known codec is present, so a codec switch never duplicates a day in Athena.
func PlanDays(in PlanInput) Plan {
	p := Plan{}
	p.First, p.Last = Window(in.Now, in.BackfillDays, in.Settle)
	storedDays := make([]time.Time, len(in.Stored))
	for i, o := range in.Stored {
		storedDays[i] = o.Day
	}
	p.From = BacklogFrom(in.Now, in.BackfillDays, in.Settle, in.Backlog, storedDays)
	stored := map[time.Time][]StoredObject{}
	for _, o := range in.Stored {
		if d := Midnight(o.Day); p.inScope(d) {
			stored[d] = append(stored[d], o)
		}
	}
	p.Present = slices.SortedFunc(maps.Keys(stored), time.Time.Compare)

	seen := map[time.Time]bool{}
	for _, a := range in.Available {
		d := Midnight(a.Day)
		if !p.inScope(d) || seen[d] {
			continue
		}
		seen[d] = true
		p.Available = append(p.Available, d)
		p.Days = append(p.Days, decide(in, d, a.TotalCost, stored[d], d.Before(p.First)))
	}
	slices.SortFunc(p.Available, time.Time.Compare)
	slices.SortFunc(p.Days, func(a, b DayPlan) int { return a.Day.Compare(b.Day) })
	return p
}

// decide plans one available day d with its stored objects. A backlog day is exported only
// when missing: config changes, drift and FORCE_DATES are the window's business, as checking
// them over a year would cost a HEAD per stored day on every run.
func decide(in PlanInput, d time.Time, total float64, objs []StoredObject, backlog bool) DayPlan {
	dp := DayPlan{Day: d, Key: in.Layout.Key(d, in.Codec), Total: total}
	switch {
	case len(objs) == 0:
		dp.Reason, dp.Export = ReasonMissing, true
		if backlog {
			dp.Detail = "older than the backfill window (BACKFILL_PERIOD_DAYS): the server still holds it"
		}
		return dp
	case backlog:
		dp.Reason, dp.Detail = ReasonCurrent, "older than the backfill window: kept as stored"
		return dp
	}
	// The object that speaks for the day: the one under the current codec, if any.
	slices.SortFunc(objs, func(a, b StoredObject) int { return codecRank(a.Codec) - codecRank(b.Codec) })
	primary := objs[0]
	for _, o := range objs {
		if o.Codec == in.Codec {
			primary = o
			dp.ETag = o.Attrs.ETag
		}
	}
	fp := primary.Attrs.Metadata[MetaFingerprint]
	switch {
	case slices.ContainsFunc(in.Force, func(f time.Time) bool { return Midnight(f).Equal(d) }):
		dp.Reason, dp.Export = ReasonForced, true
	case !writtenByUs(primary.Attrs) && in.ReexportLegacy:
		dp.Reason, dp.Export = ReasonLegacyReplaced, true
	case !writtenByUs(primary.Attrs):
		dp.Reason, dp.Detail = ReasonLegacyKept, "no "+MetaFingerprint+" metadata: not written by this exporter"
	case fp != in.Fingerprint && in.ReexportOnConfigChange:
		dp.Reason, dp.Export = ReasonConfigChanged, true
		dp.Detail = fmt.Sprintf("fingerprint %s, now %s", fp, in.Fingerprint)
	default:
		dp.Reason = ReasonCurrent
		if fp != in.Fingerprint {
			dp.Detail = "config changed, kept: REEXPORT_ON_CONFIG_CHANGE=false"
		}
		if drifted, why := drift(primary.Attrs.Metadata[MetaDayTotal], total, in.DriftTolerance); drifted {
			dp.Reason, dp.Export, dp.Detail = ReasonDrifted, true, why
		}
	}
	for _, o := range objs {
		switch {
		case o.Key == dp.Key:
		case dp.Export:
			dp.Delete = append(dp.Delete, o.Key) // afterwards the day has exactly one file
		case o.Key != primary.Key && writtenByUs(o.Attrs):
			dp.Delete = append(dp.Delete, o.Key)
		}
	}
	return dp
}

// drift compares the stored day total with Kubecost's. A missing or unreadable total
// counts as drifted: the day cannot be vouched for.
func drift(stored string, now, tolerance float64) (bool, string) {
	was, err := strconv.ParseFloat(stored, 64)
	if err != nil || math.IsNaN(was) || math.IsInf(was, 0) {
		return true, fmt.Sprintf("stored %s %q is not a number", MetaDayTotal, stored)
	}
	diff := math.Abs(now - was)
	if diff == 0 {
		return false, ""
	}
	rel := diff / math.Max(math.Abs(was), math.SmallestNonzeroFloat64)
	if rel <= tolerance {
		return false, ""
	}
	if was == 0 {
		return true, fmt.Sprintf("day total was 0, now %s", FormatTotal(now))
	}
	return true, fmt.Sprintf("day total %s, now %s (%+.3g%%)", FormatTotal(was), FormatTotal(now), (now-was)/math.Abs(was)*100)
}

func codecRank(c Codec) int {
	if i := slices.Index(Codecs(), c); i >= 0 {
		return i
	}
	return len(Codecs())
}

// FormatTotal renders a day total for MetaDayTotal and the logs so that it parses back to
// the same float64 (an unchanged day never reads as drifted). 'f', as 'g' turns a million
// dollars into 1.234567e+06; a RoundTotal total prints at most 6 decimals.
func FormatTotal(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// RoundTotal rounds a day total (a sum of thousands of costs) to a millionth of a dollar.
//
// Not compensated summation: the costs are decimals a float64 cannot hold, so even their
// exact sum is often not the decimal total (0.1+0.2 is 0.30000000000000004). Rounding
// removes the noise (78.29131000000001), and what it loses is far below DRIFT_TOLERANCE
// (0.1% by default) and what servers price. The rounded value is compared, stored and
// logged, so all three agree. Totals above about a billion dollars keep their digits.
func RoundTotal(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= 1e9 {
		return v
	}
	return math.Round(v*1e6) / 1e6
}
