package report

import (
	"math"
	"testing"
	"time"
)

func TestParseKey(t *testing.T) {
	cases := []struct {
		key     string
		ok      bool
		cluster string
	}{
		{"account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_prod.snappy.parquet", true, "prod"},
		{"team/costs/account_id=111122223333/region=eu-west-1/year=2026/month=11/2026-11-05_prod-eu.zstd.parquet", true, "prod-eu"},
		{"account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_my_cluster.v2.gzip.parquet", true, "my_cluster.v2"},
		{"account_id=111122223333/region=us-east-1/year=2026/month=10/2026-11-05_prod.snappy.parquet", false, ""}, // wrong month folder
		{"account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_prod.lz4.parquet", false, ""},
		{"account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-31_prod.snappy.parquet", false, ""},
		{"account_id=111122223333/region=us-east-1/year=2026/month=11/report.html", false, ""},
	}
	for _, tc := range cases {
		f, ok := ParseKey(tc.key)
		if ok != tc.ok || f.Cluster != tc.cluster {
			t.Errorf("ParseKey(%q) = %+v, %v; want cluster %q, %v", tc.key, f, ok, tc.cluster, tc.ok)
		}
		if ok && !f.Day.Equal(time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("ParseKey(%q): day %v", tc.key, f.Day)
		}
	}
}

// TestNiceScale: axes end within a quarter of the data, on round ticks.
func TestNiceScale(t *testing.T) {
	for _, peak := range []float64{0.07, 0.7, 1, 1.2, 3, 7, 12.5, 23, 49.9, 50, 69.5, 101, 120, 1347.84, 4100, 99999} {
		s := niceScale(peak)
		if s.Max < peak || s.Max > 1.25*peak {
			t.Errorf("niceScale(%v).Max = %v: not within [peak, 1.25 peak]", peak, s.Max)
		}
		if !roundStep(s.Step) {
			t.Errorf("niceScale(%v).Step = %v: not 1, 2 or 5 times a power of ten", peak, s.Step)
		}
		if n := s.Max / s.Step; math.Abs(n-math.Round(n)) > 1e-9 || n < 4 {
			t.Errorf("niceScale(%v) = %+v: %v ticks", peak, s, n)
		}
	}
	if s := niceScale(23); s.Max != 25 || s.Step != 5 {
		t.Errorf("niceScale(23) = %+v, want 0-25 by 5", s)
	}
	for _, c := range []struct {
		peak, v float64
		want    string
	}{{23, 10, "10"}, {3, 1.5, "1.5"}, {0.7, 0.2, "0.2"}, {4100, 2000, "2k"}, {12000, 5000, "5k"}} {
		if got := niceScale(c.peak).label(c.v); got != c.want {
			t.Errorf("tick %v of a 0-%v axis prints %q, want %q", c.v, c.peak, got, c.want)
		}
	}
}

func roundStep(step float64) bool {
	m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
	for _, ok := range []float64{1, 2, 5} {
		if math.Abs(m-ok) < 1e-9 {
			return true
		}
	}
	return false
}
