package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

var prod = exporter.Layout{Account: "111122223333", Region: "us-east-1", Cluster: "prod"}

// expectedDays is what the first run must export: the simulator's
// available days among CCA's days, computed here independently of the
// exporter. CCA asks for window=midnight(now − N·24h + 1 day),
// midnight(now − 2 days), and Kubecost excludes the end.
func expectedDays(sim *kubecostsim.Server, backfill int) []time.Time {
	return ccaDaysAt(sim, sim.Sim.Config().Now(), backfill)
}

func ccaDaysAt(sim *kubecostsim.Server, at time.Time, backfill int) []time.Time {
	secs := at.Unix()
	start := (secs - int64(backfill-1)*86400) / 86400 * 86400 // Unix times here are positive: / floors
	end := (secs - 2*86400) / 86400 * 86400
	var out []time.Time
	for _, d := range sim.Sim.AvailableDays() {
		if u := d.Unix(); u >= start && u < end {
			out = append(out, d)
		}
	}
	return out
}

func TestEndToEndMinIO(t *testing.T) {
	h := newHarness(t)

	// Another cluster whose name starts with ours, and one that ends with it,
	// already have files for every day of the window.
	first, last := exporter.Window(now, 20, exporter.DefaultSettle)
	var others []string
	for d := first; !d.After(last); d = d.Add(24 * time.Hour) {
		for _, c := range []string{"prod-eu", "eu_prod"} {
			k := exporter.Layout{Account: prod.Account, Region: prod.Region, Cluster: c}.Key(d, exporter.Snappy)
			h.put(k, "not ours")
			others = append(others, k)
		}
	}
	before := h.objects()

	want := expectedDays(h.sim, 20)
	if len(want) == 0 || len(want) >= 17 {
		t.Fatalf("retention should cut the 17-day window; the simulator has %d days in it", len(want))
	}
	// 2026-11-21 10:00: CCA's newest day is the 18th, the latest day that
	// ended at least 48 hours ago; the 19th ended only 34 hours ago.
	if newest := want[len(want)-1]; !newest.Equal(time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("CCA's newest day is %s, want 2026-11-18", newest.Format(time.DateOnly))
	}

	// Run 1 uploads exactly the available days.
	code, logs := h.run(nil)
	if code != cli.ExitOK {
		t.Fatalf("run 1 exit %d\n%s", code, logs)
	}
	after1 := h.objects()
	var wantKeys, gotKeys []string
	for _, d := range want {
		wantKeys = append(wantKeys, prod.Key(d, exporter.Snappy))
	}
	for k := range after1 {
		if _, ok := prod.ParseDay(k); ok {
			gotKeys = append(gotKeys, k)
		}
	}
	slices.Sort(gotKeys)
	if !slices.Equal(gotKeys, wantKeys) {
		t.Fatalf("run 1 wrote\n%v\nwant\n%v", gotKeys, wantKeys)
	}
	for _, k := range others {
		if after1[k] != before[k] {
			t.Errorf("another cluster's file %s was touched", k)
		}
	}
	assertSummary(t, logs, len(want), len(want))

	// Every file reads back with an independent reader and matches the truth.
	proj := schema.NewProjection(clusterARN, "prod", []string{labelKey}, nil)
	for _, d := range want {
		checkFile(t, h, proj, d)
	}
	checkLabels(t, h, want[len(want)/2])

	// Run 2 uploads nothing.
	code, logs = h.run(nil)
	if code != cli.ExitOK || !strings.Contains(logs, "nothing to do") {
		t.Fatalf("run 2 exit %d, want 0 and 'nothing to do'\n%s", code, logs)
	}
	if after2 := h.objects(); !mapsEqual(after1, after2) {
		t.Fatalf("run 2 changed the bucket")
	}
	assertSummary(t, logs, 0, 0)

	// Deleting one object makes run 3 restore exactly that one.
	gone := prod.Key(want[len(want)/2], exporter.Snappy)
	if _, err := h.s3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(gone)}); err != nil {
		t.Fatal(err)
	}
	code, logs = h.run(nil)
	if code != cli.ExitOK {
		t.Fatalf("run 3 exit %d\n%s", code, logs)
	}
	after3 := h.objects()
	for k, o := range after1 {
		if k == gone {
			if _, ok := after3[k]; !ok {
				t.Errorf("run 3 did not restore %s", k)
			}
			continue
		}
		if after3[k] != o {
			t.Errorf("run 3 touched %s", k)
		}
	}
	if len(after3) != len(after1) {
		t.Errorf("run 3 left %d objects, want %d", len(after3), len(after1))
	}
	assertSummary(t, logs, 1, 1)
	checkFile(t, h, proj, want[len(want)/2])
}

func mapsEqual(a, b map[string]object) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// checkFile reads one day back with arrow-go and compares it with the
// simulator's truth.
func checkFile(t *testing.T, h *harness, proj *schema.Projection, d time.Time) {
	t.Helper()
	key := prod.Key(d, exporter.Snappy)
	f := pqcheck.Check(t, h.get(key), proj)
	truth := dayTruth(t, h, d)
	if f.NumRows != int64(truth.Count) {
		t.Errorf("%s: %d rows, simulator has %d allocations", key, f.NumRows, truth.Count)
	}
	sums, err := f.SumBy("properties.namespace", "totalCost")
	if err != nil {
		t.Fatal(err)
	}
	for ns, want := range truth.ByNamespace {
		if got := sums[ns]; math.Abs(got-want) > 1e-6*math.Abs(want) {
			t.Errorf("%s: namespace %q totalCost %.9f, truth %.9f", key, ns, got, want)
		}
	}
	if len(sums) != len(truth.ByNamespace) {
		t.Errorf("%s: namespaces %v, truth %v", key, sums, truth.ByNamespace)
	}
	if f.Codecs()[0] != "SNAPPY" {
		t.Errorf("%s: codec %v", key, f.Codecs())
	}
	// The schema version is recorded in the object metadata and the
	// Parquet footer, so readers can tell files with appended columns.
	head, err := h.s3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	if got := head.Metadata["schema-version"]; got != schema.Version || schema.Version != "2" {
		t.Errorf("%s: object metadata schema-version %q, want 2", key, got)
	}
	if got := f.KeyValue["kubecost_s3_exporter.schema_version"]; got != schema.Version {
		t.Errorf("%s: footer schema_version %q, want %s", key, got, schema.Version)
	}
}

// dayQuery is the query the exporter sends for a daily file (CCA's flags).
func dayQuery(d time.Time) url.Values {
	return url.Values{
		"window": {d.Format(time.RFC3339) + "," + d.Add(24*time.Hour).Format(time.RFC3339)}, "aggregate": {aggregate},
		"step": {"1d"}, "accumulate": {"false"}, "idle": {"true"}, "splitIdle": {"true"}, "idleByNode": {"true"},
		"shareTenancyCosts": {"true"},
	}
}

// dayTruth sums the simulator's truth over the sets of dayQuery, idle
// allocations included, without going through JSON.
func dayTruth(t *testing.T, h *harness, d time.Time) kubecostsim.Truth {
	t.Helper()
	sets, err := h.sim.Sim.TruthFor(dayQuery(d))
	if err != nil {
		t.Fatal(err)
	}
	sum := kubecostsim.Truth{ByNamespace: map[string]float64{}}
	for _, s := range sets {
		sum.Count += s.Count
		sum.TotalCost += s.TotalCost
		for ns, c := range s.ByNamespace {
			sum.ByNamespace[ns] += c
		}
	}
	return sum
}

// checkLabels compares the label column with each pod's label in the raw
// Kubecost response, decoded here with encoding/json.
func checkLabels(t *testing.T, h *harness, d time.Time) {
	t.Helper()
	var raw bytes.Buffer
	if err := h.sim.Sim.WriteResponse(&raw, dayQuery(d)); err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Data []map[string]struct {
			Properties struct {
				Labels map[string]string `json:"labels"`
			} `json:"properties"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, set := range resp.Data {
		for name, a := range set {
			want[name] = a.Properties.Labels[schema.Sanitize(labelKey)]
		}
	}
	f, err := pqcheck.OpenBytes(h.get(prod.Key(d, exporter.Snappy)))
	if err != nil {
		t.Fatal(err)
	}
	names, _ := f.Strings("name")
	vals, err := f.Strings("properties.labels." + labelKey)
	if err != nil {
		t.Fatalf("no label column: %v (columns %v)", err, f.Names())
	}
	var set, unset int
	for i, n := range names {
		if vals[i] != want[n] {
			t.Errorf("%s: label %q, Kubecost says %q", n, vals[i], want[n])
		}
		if vals[i] == "" {
			unset++
		} else {
			set++
		}
	}
	if set == 0 || unset == 0 {
		t.Errorf("want rows with and without %s; got %d with, %d without", labelKey, set, unset)
	}
}
