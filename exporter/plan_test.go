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

func TestBackfillWindow(t *testing.T) {
	cases := []struct {
		now         string
		days        int
		first, last string
	}{
		{"2026-11-21T10:00:00Z", 15, "2026-11-07", "2026-11-19"},
		{"2026-11-21T00:00:00Z", 15, "2026-11-07", "2026-11-19"},
		{"2026-11-21T23:59:59Z", 15, "2026-11-07", "2026-11-19"},
		{"2026-11-21T10:00:00Z", 3, "2026-11-19", "2026-11-19"},
		// Year boundary.
		{"2027-01-02T06:00:00Z", 5, "2026-12-29", "2026-12-31"},
		// Leap day: 2028-02-29 exists.
		{"2028-03-02T12:00:00Z", 4, "2028-02-28", "2028-02-29"},
		// Non-UTC input is converted first: 2026-11-21T01:00+05:00 is 2026-11-20T20:00Z.
		{"2026-11-21T01:00:00+05:00", 3, "2026-11-18", "2026-11-18"},
	}
	for _, c := range cases {
		now, err := time.Parse(time.RFC3339, c.now)
		if err != nil {
			t.Fatal(err)
		}
		first, last := BackfillWindow(now, c.days)
		if got := fmt.Sprint(fmtDays([]time.Time{first, last})); got != fmt.Sprint([]string{c.first, c.last}) {
			t.Errorf("BackfillWindow(%s, %d) = %s, want [%s %s]", c.now, c.days, got, c.first, c.last)
		}
		if n := int(last.Sub(first).Hours()/24) + 1; n != c.days-2 {
			t.Errorf("BackfillWindow(%s, %d) holds %d days, want N-2 = %d", c.now, c.days, n, c.days-2)
		}
	}
}

func TestPlanDays(t *testing.T) {
	now := time.Date(2026, 3, 3, 9, 30, 0, 0, time.UTC) // window 2026-02-17 .. 2026-03-01
	window := span("2026-02-17", "2026-03-01")
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
			keys:      keysFor(prod, Snappy, span("2026-02-17", "2026-02-27")...),
			missing:   days("2026-02-28", "2026-03-01"),
			present:   span("2026-02-17", "2026-02-27"),
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
			name:      "other known codecs count as present",
			available: days("2026-02-20", "2026-02-21", "2026-02-22"),
			keys:      append(keysFor(prod, Zstd, d("2026-02-20")), keysFor(prod, Gzip, d("2026-02-21"))...),
			missing:   days("2026-02-22"),
			present:   days("2026-02-20", "2026-02-21"),
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
			available: days("2026-02-16", "2026-02-17", "2026-03-01", "2026-03-02"),
			missing:   days("2026-02-17", "2026-03-01"),
		},
		{
			name:      "stored days outside the window are not reported",
			available: days("2026-02-17"),
			keys:      keysFor(prod, Snappy, d("2026-02-10"), d("2026-03-02")),
			missing:   days("2026-02-17"),
		},
		{
			name:      "unordered, duplicated and non-midnight available days",
			available: []time.Time{d("2026-02-25").Add(5 * time.Hour), d("2026-02-19"), d("2026-02-25"), d("2026-02-19").In(time.FixedZone("x", -5*3600))},
			missing:   days("2026-02-19", "2026-02-25"),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := PlanDays(now, 15, c.available, c.keys, prod)
			if !p.First.Equal(d("2026-02-17")) || !p.Last.Equal(d("2026-03-01")) {
				t.Fatalf("window %v..%v", p.First, p.Last)
			}
			if got, want := fmtDays(p.Missing), fmtDays(c.missing); !slices.Equal(got, want) {
				t.Errorf("missing = %v, want %v", got, want)
			}
			if got, want := fmtDays(p.Present), fmtDays(c.present); !slices.Equal(got, want) {
				t.Errorf("present = %v, want %v", got, want)
			}
		})
	}
}

// TestPlanDaysExhaustive checks the planner's invariants for every subset
// of a small window, at a leap-year month boundary.
func TestPlanDaysExhaustive(t *testing.T) {
	now := time.Date(2028, 3, 3, 0, 0, 0, 0, time.UTC) // window 2028-02-28 .. 2028-03-01 (3 days, with the leap day)
	window := span("2028-02-28", "2028-03-01")
	for availMask := 0; availMask < 1<<len(window); availMask++ {
		for storedMask := 0; storedMask < 1<<len(window); storedMask++ {
			var avail []time.Time
			var keys []string
			for i, w := range window {
				if availMask&(1<<i) != 0 {
					avail = append(avail, w)
				}
				if storedMask&(1<<i) != 0 {
					keys = append(keys, prod.Key(w, Codecs()[i%3]))
					// Another cluster always has every day.
					keys = append(keys, Layout{Account: prod.Account, Region: prod.Region, Cluster: "prod-eu"}.Key(w, Snappy))
				}
			}
			p := PlanDays(now, 5, avail, keys, prod)
			var want []time.Time
			for i, w := range window {
				if availMask&(1<<i) != 0 && storedMask&(1<<i) == 0 {
					want = append(want, w)
				}
			}
			if !slices.Equal(fmtDays(p.Missing), fmtDays(want)) {
				t.Fatalf("avail=%03b stored=%03b: missing %v, want %v", availMask, storedMask, fmtDays(p.Missing), fmtDays(want))
			}
		}
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
