package exporter

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func d(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func days(ss ...string) []time.Time {
	out := make([]time.Time, len(ss))
	for i, s := range ss {
		out[i] = d(s)
	}
	return out
}

// span returns every day from first to last inclusive.
func span(first, last string) []time.Time {
	var out []time.Time
	for t := d(first); !t.After(d(last)); t = t.Add(24 * time.Hour) {
		out = append(out, t)
	}
	return out
}

func fmtDays(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Format(time.DateOnly)
	}
	return out
}

var prod = Layout{Account: "111122223333", Region: "us-east-1", Cluster: "prod"}

func keysFor(l Layout, codec Codec, ts ...time.Time) []string {
	var out []string
	for _, t := range ts {
		out = append(out, l.Key(t, codec))
	}
	return out
}

// ccaDays computes the days CCA exports at the Unix second now, with
// integer day numbers instead of time.Time: CCA asks Kubecost for
// window=midnight(now − n·24h + 1 day),midnight(now − settle) and Kubecost
// treats the end as exclusive. It returns the day numbers [from, to).
func ccaDays(now int64, n int, settleHours int64) (from, to int64) {
	floorDiv := func(a, b int64) int64 {
		q := a / b
		if a%b != 0 && (a < 0) != (b < 0) {
			q--
		}
		return q
	}
	from = floorDiv(now-int64(n)*86400+86400, 86400)
	to = floorDiv(now-settleHours*3600, 86400)
	return from, max(from, to)
}

// TestWindowMatchesCCA checks Window against CCA's formula, computed
// independently, at every hour (and the last millisecond of every hour) of
// more than two years: 2027 to March 2029, with the leap day 2028-02-29 and
// every month and year end.
func TestWindowMatchesCCA(t *testing.T) {
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2029, 3, 2, 0, 0, 0, 0, time.UTC)
	checked := 0
	for _, settle := range []int64{48, 0, 24, 36, 72} {
		for _, n := range []int{3, 4, 5, 7, 15, 31, 60} {
			for h := start; h.Before(end); h = h.Add(time.Hour) {
				for _, now := range []time.Time{h, h.Add(time.Hour - time.Millisecond)} {
					from, to := ccaDays(now.Unix(), n, settle)
					first, last := Window(now, n, time.Duration(settle)*time.Hour)
					got := int64(0)
					if !last.Before(first) {
						got = int64(last.Sub(first)/(24*time.Hour)) + 1
					}
					if got != to-from || (got > 0 && (first.Unix() != from*86400 || last.Unix() != (to-1)*86400)) {
						t.Fatalf("now=%s n=%d settle=%dh: Window %s..%s (%d days), CCA days %s..%s (%d)", now.Format(time.RFC3339Nano), n, settle,
							first.Format(time.DateOnly), last.Format(time.DateOnly), got,
							time.Unix(from*86400, 0).UTC().Format(time.DateOnly), time.Unix((to-1)*86400, 0).UTC().Format(time.DateOnly), to-from)
					}
					if settle == 48 && n >= 3 && got != int64(n-3) {
						t.Fatalf("now=%s n=%d: %d days, CCA exports n−3", now, n, got)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d (time, N, settle) cases agree with CCA", checked)
}

func TestBackfillWindow(t *testing.T) {
	cases := []struct {
		now         string
		days        int
		first, last string // last "" = empty window
	}{
		// CONTRACT §2: with 15, a 00:00 run exports 12 days, the newest three days ago by date.
		{"2026-11-21T00:00:00Z", 15, "2026-11-07", "2026-11-18"},
		{"2026-11-21T10:00:00Z", 15, "2026-11-07", "2026-11-18"},
		{"2026-11-21T23:59:59Z", 15, "2026-11-07", "2026-11-18"},
		{"2026-11-21T10:00:00Z", 5, "2026-11-17", "2026-11-18"},
		{"2026-11-21T10:00:00Z", 4, "2026-11-18", "2026-11-18"},
		{"2026-11-21T10:00:00Z", 3, "2026-11-19", ""},
		// Year boundary.
		{"2027-01-02T06:00:00Z", 6, "2026-12-28", "2026-12-30"},
		// Leap day: 2028-02-29 exists.
		{"2028-03-03T12:00:00Z", 5, "2028-02-28", "2028-02-29"},
		// Non-UTC input is converted first: 2026-11-21T01:00+05:00 is 2026-11-20T20:00Z.
		{"2026-11-21T01:00:00+05:00", 4, "2026-11-17", "2026-11-17"},
	}
	for _, c := range cases {
		now, err := time.Parse(time.RFC3339, c.now)
		if err != nil {
			t.Fatal(err)
		}
		first, last := Window(now, c.days, DefaultSettle)
		if !first.Equal(d(c.first)) {
			t.Errorf("Window(%s, %d, 48h) first = %s, want %s", c.now, c.days, first.Format(time.DateOnly), c.first)
		}
		switch {
		case c.last == "" && !last.Before(first):
			t.Errorf("Window(%s, %d, 48h) = %s..%s, want an empty window", c.now, c.days, first.Format(time.DateOnly), last.Format(time.DateOnly))
		case c.last != "" && !last.Equal(d(c.last)):
			t.Errorf("Window(%s, %d, 48h) last = %s, want %s", c.now, c.days, last.Format(time.DateOnly), c.last)
		}
	}
}

const fp = "0123456789abcdef"

// ours is an object this exporter wrote with fingerprint f for total.
func ours(l Layout, day time.Time, c Codec, f string, total float64) StoredObject {
	return StoredObject{Key: l.Key(day, c), Day: day, Codec: c, Attrs: ObjectAttrs{ETag: `"etag-` + l.Key(day, c) + `"`,
		Metadata: map[string]string{MetaFingerprint: f, MetaDayTotal: FormatTotal(total), MetaRows: "10"}}}
}

func legacy(l Layout, day time.Time, c Codec) StoredObject {
	return StoredObject{Key: l.Key(day, c), Day: day, Codec: c, Attrs: ObjectAttrs{ETag: `"legacy"`, Metadata: map[string]string{}}}
}

// earlier is an object of a version of ours that wrote no fingerprint.
func earlier(l Layout, day time.Time, c Codec) StoredObject {
	return StoredObject{Key: l.Key(day, c), Day: day, Codec: c, Attrs: ObjectAttrs{ETag: `"v1"`,
		Metadata: map[string]string{MetaExporterVersion: "v1.0.0", MetaRows: "10"}}}
}

func storedFor(l Layout, keys []string) []StoredObject {
	var out []StoredObject
	for _, k := range keys {
		if day, c, ok := l.ParseKey(k); ok {
			out = append(out, ours(l, day, c, fp, 0))
		}
	}
	return out
}

func exportDays(p Plan) []time.Time {
	var out []time.Time
	for _, dp := range p.Exports() {
		out = append(out, dp.Day)
	}
	return out
}

func TestPlanDays(t *testing.T) {
	now := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC) // window 2026-02-18 .. 2026-03-01
	window := span("2026-02-18", "2026-03-01")
	prodEU := Layout{Account: prod.Account, Region: prod.Region, Cluster: "prod-eu"}
	euProd := Layout{Account: prod.Account, Region: prod.Region, Cluster: "eu_prod"}

	cases := []struct {
		name      string
		available []time.Time
		keys      []string
		missing   []time.Time
		present   []time.Time
	}{
		{name: "empty bucket exports every available day", available: window, missing: window},
		{name: "nothing available", available: nil, keys: keysFor(prod, Snappy, window...), present: window},
		{name: "everything present", available: window, keys: keysFor(prod, Snappy, window...), present: window},
		{
			name:      "month boundary gap",
			available: window,
			keys:      keysFor(prod, Snappy, span("2026-02-18", "2026-02-27")...),
			missing:   days("2026-02-28", "2026-03-01"),
			present:   span("2026-02-18", "2026-02-27"),
		},
		{
			name:      "other clusters interleaved never count",
			available: window,
			keys: append(append(keysFor(prodEU, Snappy, window...), keysFor(euProd, Snappy, window...)...),
				keysFor(prod, Snappy, d("2026-02-20"))...),
			missing: slices.DeleteFunc(slices.Clone(window), func(t time.Time) bool { return t.Equal(d("2026-02-20")) }),
			present: days("2026-02-20"),
		},
		{
			name:      "unknown codecs and near-miss names do not count",
			available: days("2026-02-20", "2026-02-21", "2026-02-22", "2026-02-23"),
			keys: []string{
				prod.MonthPrefix(d("2026-02-20")) + "2026-02-20_prod.lz4.parquet",
				prod.MonthPrefix(d("2026-02-21")) + "2026-02-21_prod.snappy.parquet.tmp",
				prod.MonthPrefix(d("2026-02-22")) + "2026-02-22_prod.parquet",
				prod.MonthPrefix(d("2026-02-23")) + "x2026-02-23_prod.snappy.parquet",
			},
			missing: days("2026-02-20", "2026-02-21", "2026-02-22", "2026-02-23"),
		},
		{
			name:      "available days outside the window are ignored",
			available: days("2026-02-17", "2026-02-18", "2026-03-01", "2026-03-02"),
			missing:   days("2026-02-18", "2026-03-01"),
		},
		{
			name:      "stored days outside the window are not reported",
			available: days("2026-02-18"),
			keys:      keysFor(prod, Snappy, d("2026-02-10"), d("2026-03-02")),
			missing:   days("2026-02-18"),
		},
		{
			name:      "unordered, duplicated and non-midnight available days",
			available: []time.Time{d("2026-02-25").Add(5 * time.Hour), d("2026-02-19"), d("2026-02-25"), d("2026-02-19").In(time.FixedZone("x", -5*3600))},
			missing:   days("2026-02-19", "2026-02-25"),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			avail := make([]DayTotal, len(c.available))
			for i, a := range c.available {
				avail[i] = DayTotal{Day: a}
			}
			p := PlanDays(PlanInput{Now: now, BackfillDays: 15, Settle: DefaultSettle, Available: avail,
				Stored: storedFor(prod, c.keys), Layout: prod, Policy: Policy{Fingerprint: fp, Codec: Snappy, ReexportOnConfigChange: true, DriftTolerance: 0.001}})
			if !p.First.Equal(d("2026-02-18")) || !p.Last.Equal(d("2026-03-01")) {
				t.Fatalf("window %v..%v", p.First, p.Last)
			}
			if got, want := fmtDays(exportDays(p)), fmtDays(c.missing); !slices.Equal(got, want) {
				t.Errorf("to export = %v, want %v", got, want)
			}
			for _, dp := range p.Days {
				if want := slices.ContainsFunc(c.missing, dp.Day.Equal); (dp.Reason == ReasonMissing) != want || (dp.Reason == ReasonCurrent) == want {
					t.Errorf("%s: reason %s", dp.Day.Format(time.DateOnly), dp.Reason)
				}
			}
			if got, want := fmtDays(p.Present), fmtDays(c.present); !slices.Equal(got, want) {
				t.Errorf("present = %v, want %v", got, want)
			}
		})
	}
}

// TestPlanReasons covers every reason, and what is deleted and kept.
func TestPlanReasons(t *testing.T) {
	now := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC) // window 2026-02-18 .. 2026-03-01
	day := d("2026-02-20")
	const newFP = "fedcba9876543210"
	pol := Policy{Fingerprint: fp, Codec: Snappy, ReexportOnConfigChange: true, DriftTolerance: 0.001}
	type want struct {
		reason Reason
		export bool
		key    string
		etag   string
		delete []string
	}
	snappyKey, zstdKey, gzipKey := prod.Key(day, Snappy), prod.Key(day, Zstd), prod.Key(day, Gzip)
	cases := []struct {
		name   string
		total  float64
		stored []StoredObject
		pol    func(p *Policy)
		want   want
	}{
		{"missing", 100, nil, nil, want{ReasonMissing, true, snappyKey, "", nil}},
		{"current", 100, []StoredObject{ours(prod, day, Snappy, fp, 100)}, nil, want{ReasonCurrent, false, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"within the drift tolerance", 100.09, []StoredObject{ours(prod, day, Snappy, fp, 100)}, nil, want{ReasonCurrent, false, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"drifted by 1%", 101, []StoredObject{ours(prod, day, Snappy, fp, 100)}, nil, want{ReasonDrifted, true, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"drifted down", 99, []StoredObject{ours(prod, day, Snappy, fp, 100)}, nil, want{ReasonDrifted, true, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"drift from zero", 1, []StoredObject{ours(prod, day, Snappy, fp, 0)}, nil, want{ReasonDrifted, true, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"config changed", 100, []StoredObject{ours(prod, day, Snappy, newFP, 100)}, nil, want{ReasonConfigChanged, true, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"config changed, re-export off", 100, []StoredObject{ours(prod, day, Snappy, newFP, 100)}, func(p *Policy) { p.ReexportOnConfigChange = false },
			want{ReasonCurrent, false, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"config changed, re-export off, drifted", 102, []StoredObject{ours(prod, day, Snappy, newFP, 100)}, func(p *Policy) { p.ReexportOnConfigChange = false },
			want{ReasonDrifted, true, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"legacy kept", 100, []StoredObject{legacy(prod, day, Snappy)}, nil, want{ReasonLegacyKept, false, snappyKey, `"legacy"`, nil}},
		{"legacy kept whatever the drift", 5000, []StoredObject{legacy(prod, day, Snappy)}, nil, want{ReasonLegacyKept, false, snappyKey, `"legacy"`, nil}},
		{"written by an earlier version of ours: config changed", 100, []StoredObject{earlier(prod, day, Snappy)}, nil,
			want{ReasonConfigChanged, true, snappyKey, `"v1"`, nil}},
		// No day total was recorded, so the numbers cannot be checked; and
		// that version exported days before Kubecost had settled them.
		{"earlier version of ours, re-export off: no day total, so drifted", 100, []StoredObject{earlier(prod, day, Snappy)},
			func(p *Policy) { p.ReexportOnConfigChange = false }, want{ReasonDrifted, true, snappyKey, `"v1"`, nil}},
		{"legacy replaced", 100, []StoredObject{legacy(prod, day, Snappy)}, func(p *Policy) { p.ReexportLegacy = true }, want{ReasonLegacyReplaced, true, snappyKey, `"legacy"`, nil}},
		{"forced", 100, []StoredObject{ours(prod, day, Snappy, fp, 100)}, func(p *Policy) { p.Force = []time.Time{day.Add(3 * time.Hour)} },
			want{ReasonForced, true, snappyKey, `"etag-` + snappyKey + `"`, nil}},
		{"forced legacy", 100, []StoredObject{legacy(prod, day, Snappy)}, func(p *Policy) { p.Force = []time.Time{day} }, want{ReasonForced, true, snappyKey, `"legacy"`, nil}},
		{"codec switched: new key, old deleted after", 100, []StoredObject{ours(prod, day, Snappy, fp, 100)}, func(p *Policy) { p.Codec, p.Fingerprint = Zstd, newFP },
			want{ReasonConfigChanged, true, zstdKey, "", []string{snappyKey}}},
		{"codec switched, re-export off: old file stays", 100, []StoredObject{ours(prod, day, Snappy, fp, 100)},
			func(p *Policy) { p.Codec, p.Fingerprint, p.ReexportOnConfigChange = Zstd, newFP, false }, want{ReasonCurrent, false, zstdKey, "", nil}},
		{"leftover of an interrupted codec switch is removed", 100,
			[]StoredObject{ours(prod, day, Snappy, fp, 100), ours(prod, day, Zstd, newFP, 100)}, func(p *Policy) { p.Codec, p.Fingerprint = Zstd, newFP },
			want{ReasonCurrent, false, zstdKey, `"etag-` + zstdKey + `"`, []string{snappyKey}}},
		{"a legacy extra is kept when the day is current", 100,
			[]StoredObject{legacy(prod, day, Snappy), ours(prod, day, Zstd, newFP, 100)}, func(p *Policy) { p.Codec, p.Fingerprint = Zstd, newFP },
			want{ReasonCurrent, false, zstdKey, `"etag-` + zstdKey + `"`, nil}},
		{"a replaced day keeps exactly one file", 150,
			[]StoredObject{ours(prod, day, Gzip, fp, 100), legacy(prod, day, Snappy), ours(prod, day, Zstd, fp, 100)}, func(p *Policy) { p.Codec = Zstd },
			want{ReasonDrifted, true, zstdKey, `"etag-` + zstdKey + `"`, []string{snappyKey, gzipKey}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := pol
			if c.pol != nil {
				c.pol(&p)
			}
			plan := PlanDays(PlanInput{Now: now, BackfillDays: 15, Settle: DefaultSettle, Layout: prod, Policy: p,
				Available: []DayTotal{{Day: day, TotalCost: c.total}}, Stored: c.stored})
			if len(plan.Days) != 1 {
				t.Fatalf("days %+v", plan.Days)
			}
			dp := plan.Days[0]
			got := want{dp.Reason, dp.Export, dp.Key, dp.ETag, dp.Delete}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got  %+v\nwant %+v (detail %q)", got, c.want, dp.Detail)
			}
			if dp.Total != c.total {
				t.Errorf("total %v, want %v", dp.Total, c.total)
			}
		})
	}
}

// TestPlanDaysExhaustive checks the planner's invariants for every subset
// of a small window, at a leap-year month boundary.
func TestPlanDaysExhaustive(t *testing.T) {
	now := time.Date(2028, 3, 4, 0, 0, 0, 0, time.UTC) // window 2028-02-28 .. 2028-03-01 (3 days, with the leap day)
	window := span("2028-02-28", "2028-03-01")
	for availMask := 0; availMask < 1<<len(window); availMask++ {
		for storedMask := 0; storedMask < 1<<len(window); storedMask++ {
			var avail []DayTotal
			var keys []string
			for i, w := range window {
				if availMask&(1<<i) != 0 {
					avail = append(avail, DayTotal{Day: w})
				}
				if storedMask&(1<<i) != 0 {
					keys = append(keys, prod.Key(w, Codecs()[i%3]))
					// Another cluster always has every day.
					keys = append(keys, Layout{Account: prod.Account, Region: prod.Region, Cluster: "prod-eu"}.Key(w, Snappy))
				}
			}
			// Every stored day was written with the current config, whatever
			// its codec, so nothing stored is re-exported.
			stored := storedFor(prod, keys)
			p := PlanDays(PlanInput{Now: now, BackfillDays: 6, Settle: DefaultSettle, Available: avail, Stored: stored, Layout: prod,
				Policy: Policy{Fingerprint: fp, Codec: Snappy, ReexportOnConfigChange: false}})
			var want []time.Time
			for i, w := range window {
				if availMask&(1<<i) != 0 && storedMask&(1<<i) == 0 {
					want = append(want, w)
				}
			}
			if !slices.Equal(fmtDays(exportDays(p)), fmtDays(want)) {
				t.Fatalf("avail=%03b stored=%03b: export %v, want %v", availMask, storedMask, fmtDays(exportDays(p)), fmtDays(want))
			}
		}
	}
}

func TestFingerprint(t *testing.T) {
	base := FingerprintInput{ClusterID: "arn:aws:eks:us-east-1:111122223333:cluster/prod", Labels: []string{"app"}, Aggregation: "container",
		Granularity: "daily", Query: "accumulate=false&aggregate=cluster&step=1d", Codec: Snappy}
	seen := map[string]string{Fingerprint(base): "base"}
	if got := Fingerprint(base); len(got) != 16 || got != Fingerprint(base) {
		t.Fatalf("fingerprint %q is not a stable 16-digit hash", got)
	}
	for name, change := range map[string]func(*FingerprintInput){
		"label added":         func(f *FingerprintInput) { f.Labels = []string{"app", "team"} },
		"labels reordered":    func(f *FingerprintInput) { f.Labels = []string{"team", "app"} },
		"annotation":          func(f *FingerprintInput) { f.Annotations = []string{"app"} },
		"aggregation":         func(f *FingerprintInput) { f.Aggregation = "pod" },
		"granularity":         func(f *FingerprintInput) { f.Granularity = "hourly" },
		"query flags":         func(f *FingerprintInput) { f.Query += "&idle=true" },
		"codec":               func(f *FingerprintInput) { f.Codec = Zstd },
		"cluster":             func(f *FingerprintInput) { f.ClusterID += "-2" },
		"label as annotation": func(f *FingerprintInput) { f.Labels, f.Annotations = nil, []string{"app"} },
	} {
		f := base
		f.Labels = slices.Clone(base.Labels)
		change(&f)
		got := Fingerprint(f)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: fingerprint %s equals that of %s", name, got, prev)
		}
		seen[got] = name
	}
}

func TestLayout(t *testing.T) {
	l := Layout{Prefix: "costs/", Account: "111122223333", Region: "us-gov-west-1", Cluster: "prod"}
	if got, want := l.Key(d("2026-03-05"), Snappy), "costs/account_id=111122223333/region=us-gov-west-1/year=2026/month=03/2026-03-05_prod.snappy.parquet"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	if got, want := l.Key(d("2026-12-31"), Zstd), "costs/account_id=111122223333/region=us-gov-west-1/year=2026/month=12/2026-12-31_prod.zstd.parquet"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	for _, k := range []string{"2026-03-05_prod-eu.snappy.parquet", "2026-03-05_eu_prod.snappy.parquet", "2026-03-05_xprod.snappy.parquet", "2026-13-05_prod.snappy.parquet", "2026-03-05_prod.snappy", "2026-03-05_prod..parquet"} {
		if _, ok := l.ParseDay(k); ok {
			t.Errorf("ParseDay(%q) matched cluster prod", k)
		}
	}
	for _, c := range Codecs() {
		if day, ok := l.ParseDay(l.Key(d("2028-02-29"), c)); !ok || !day.Equal(d("2028-02-29")) {
			t.Errorf("ParseDay(%s key) = %v, %v", c, day, ok)
		}
	}
}
