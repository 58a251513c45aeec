package report

import (
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

func TestNiceMax(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 0.7: 1, 1: 1, 1.2: 2, 3: 5, 7: 10, 69.5: 100, 120: 200, 4100: 5000} {
		if got := niceMax(in); got != want {
			t.Errorf("niceMax(%v) = %v, want %v", in, got, want)
		}
	}
}
