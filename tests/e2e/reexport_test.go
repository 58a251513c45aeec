package e2e_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// planReasons returns the reason of every "plan day" log line, by day.
func planReasons(t *testing.T, logs string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var l struct {
			Msg, Day, Reason string
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, line)
		}
		if l.Msg == "plan day" {
			out[l.Day] = l.Reason
		}
	}
	return out
}

// wantReasons checks that every day of days has reason, and that no other
// day is planned.
func wantReasons(t *testing.T, logs string, reasons map[string]string) {
	t.Helper()
	if got := planReasons(t, logs); !maps.Equal(got, reasons) {
		t.Errorf("plan reasons\n%v\nwant\n%v", got, reasons)
	}
}

func reasonsFor(ds []time.Time, reason string, except map[time.Time]string) map[string]string {
	out := map[string]string{}
	for _, d := range ds {
		r := reason
		if e, ok := except[d]; ok {
			r = e
		}
		out[d.Format(time.DateOnly)] = r
	}
	return out
}

// changedKeys lists the keys whose ETag or presence differs.
func changedKeys(a, b map[string]object) []string {
	var out []string
	for k, o := range a {
		if n, ok := b[k]; !ok || n.etag != o.etag {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func keysOf(l exporter.Layout, c exporter.Codec, ds []time.Time) []string {
	var out []string
	for _, d := range ds {
		out = append(out, l.Key(d, c))
	}
	slices.Sort(out)
	return out
}

// TestReexportLabelsAndDrift: a LABELS change rewrites every stored day
// still in Kubecost with the new column, a third run writes nothing; a 1 %
// change of one day's costs in Kubecost rewrites that day only. DRY_RUN
// prints the reasons and changes nothing.
func TestReexportLabelsAndDrift(t *testing.T) {
	h := newHarness(t)
	days := expectedDays(h.sim, 20)
	code, logs := h.run(nil)
	if code != cli.ExitOK {
		t.Fatalf("run 1 exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "missing", nil))
	v1 := h.objects()
	if got := keysOf(prod, exporter.Snappy, days); !slices.Equal(slices.Sorted(maps.Keys(v1)), got) {
		t.Fatalf("run 1 wrote %v, want %v", slices.Sorted(maps.Keys(v1)), got)
	}

	// A label added: DRY_RUN says so and writes nothing.
	const team = "team"
	labels := map[string]string{"LABELS": labelKey + ", " + team}
	dry := map[string]string{"LABELS": labels["LABELS"], "DRY_RUN": "true"}
	code, logs = h.run(dry)
	if code != cli.ExitOK || !strings.Contains(logs, `"msg":"dry run: would export"`) {
		t.Fatalf("dry run exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "config-changed", nil))
	if !mapsEqual(v1, h.objects()) {
		t.Fatal("DRY_RUN changed the bucket")
	}

	code, logs = h.run(labels)
	if code != cli.ExitOK {
		t.Fatalf("run 2 exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "config-changed", nil))
	assertSummary(t, logs, len(days), len(days))
	v2 := h.objects()
	if got := changedKeys(v1, v2); !slices.Equal(got, keysOf(prod, exporter.Snappy, days)) {
		t.Fatalf("run 2 rewrote %v, want every day", got)
	}
	proj := schema.NewProjection(clusterARN, "prod", []string{labelKey, team}, nil)
	for _, d := range days {
		checkFile(t, h, proj, d)
		f, err := pqcheck.OpenBytes(h.get(prod.Key(d, exporter.Snappy)))
		if err != nil {
			t.Fatal(err)
		}
		vals, err := f.Strings("properties.labels." + team)
		if err != nil || !slices.ContainsFunc(vals, func(v string) bool { return v != "" }) {
			t.Errorf("%s: no filled column properties.labels.%s after the label was added: %v", d.Format(time.DateOnly), team, err)
		}
	}

	// Same config again: nothing to write.
	code, logs = h.run(labels)
	if code != cli.ExitOK || !strings.Contains(logs, "nothing to do") {
		t.Fatalf("run 3 exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "current", nil))
	assertSummary(t, logs, 0, 0)
	if got := changedKeys(v2, h.objects()); len(got) != 0 {
		t.Fatalf("run 3 rewrote %v", got)
	}

	// Kubecost revises one day by 1 %: only that day is rewritten, and
	// the new file holds the new numbers.
	drifted := days[len(days)/2]
	h.sim.Sim.SetDayCostFactor(drifted, 1.01)
	code, logs = h.run(labels)
	if code != cli.ExitOK {
		t.Fatalf("run 4 exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "current", map[time.Time]string{drifted: "drifted"}))
	assertSummary(t, logs, 1, 1)
	v4 := h.objects()
	if got := changedKeys(v2, v4); !slices.Equal(got, []string{prod.Key(drifted, exporter.Snappy)}) {
		t.Fatalf("run 4 rewrote %v, want only %s", got, prod.Key(drifted, exporter.Snappy))
	}
	checkFile(t, h, proj, drifted)

	// And then it is current again.
	code, logs = h.run(labels)
	if code != cli.ExitOK || changedKeys(v4, h.objects()) != nil {
		t.Fatalf("run 5 exit %d, changed %v\n%s", code, changedKeys(v4, h.objects()), logs)
	}
}

// TestCodecSwitchAndLegacy: a COMPRESSION switch rewrites every day under
// the new suffix and deletes every old one; a file written by CCA (no
// metadata) is kept and logged as legacy-kept, until REEXPORT_LEGACY.
func TestCodecSwitchAndLegacy(t *testing.T) {
	h := newHarness(t)
	days := expectedDays(h.sim, 20)
	legacyDay := days[2]
	legacyKey := prod.Key(legacyDay, exporter.Snappy)
	h.put(legacyKey, "written by the Python exporter")

	code, logs := h.run(nil)
	if code != cli.ExitOK {
		t.Fatalf("run 1 exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "missing", map[time.Time]string{legacyDay: "legacy-kept"}))
	if string(h.get(legacyKey)) != "written by the Python exporter" {
		t.Fatal("the CCA file was replaced")
	}

	zstd := map[string]string{"COMPRESSION": "zstd"}
	code, logs = h.run(zstd)
	if code != cli.ExitOK {
		t.Fatalf("run 2 exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "config-changed", map[time.Time]string{legacyDay: "legacy-kept"}))
	others := slices.DeleteFunc(slices.Clone(days), legacyDay.Equal)
	want := append(keysOf(prod, exporter.Zstd, others), legacyKey)
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(h.objects())); !slices.Equal(got, want) {
		t.Fatalf("after the codec switch the bucket holds\n%v\nwant\n%v", got, want)
	}
	for _, d := range others {
		f, err := pqcheck.OpenBytes(h.get(prod.Key(d, exporter.Zstd)))
		if err != nil {
			t.Fatal(err)
		}
		if f.Codecs()[0] != "ZSTD" {
			t.Errorf("%s: codec %v", d.Format(time.DateOnly), f.Codecs())
		}
	}

	// Opting in replaces the CCA file too, under the current codec.
	code, logs = h.run(map[string]string{"COMPRESSION": "zstd", "REEXPORT_LEGACY": "true"})
	if code != cli.ExitOK {
		t.Fatalf("run 3 exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "current", map[time.Time]string{legacyDay: "legacy-replaced"}))
	if got := slices.Sorted(maps.Keys(h.objects())); !slices.Equal(got, keysOf(prod, exporter.Zstd, days)) {
		t.Fatalf("after REEXPORT_LEGACY the bucket holds %v", got)
	}
}

// TestEmptyWindow: BACKFILL_PERIOD_DAYS=3 holds no day that ended 48 hours
// ago, as in CCA: one warning, exit 0, nothing asked of Kubecost or S3.
func TestEmptyWindow(t *testing.T) {
	h := newHarness(t)
	h.sim.Sim.ResetRequests()
	code, logs := h.run(map[string]string{"BACKFILL_PERIOD_DAYS": "3"})
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	n := 0
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "window") {
			n++
		}
	}
	if n != 1 || !strings.Contains(logs, "holds no settled day") {
		t.Errorf("want exactly one warning about the empty window, got %d\n%s", n, logs)
	}
	if reqs := h.sim.Sim.Requests(); len(reqs) != 0 {
		t.Errorf("%d Kubecost requests for an empty window", len(reqs))
	}
	assertSummary(t, logs, 0, 0)
	out, err := h.s3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil || len(out.Contents) != 0 {
		t.Errorf("bucket not empty: %v %v", out, err)
	}

	// SETTLE_HOURS=24 at 2026-11-21 10:00: the 19th ended 34 hours ago,
	// so the same window now holds it; the 20th ended only 10 hours ago.
	code, logs = h.run(map[string]string{"BACKFILL_PERIOD_DAYS": "3", "SETTLE_HOURS": "24"})
	if code != cli.ExitOK {
		t.Fatalf("SETTLE_HOURS=24: exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, map[string]string{"2026-11-19": "missing"})
	want := prod.Key(time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC), exporter.Snappy)
	if got := slices.Sorted(maps.Keys(h.objects())); !slices.Equal(got, []string{want}) {
		t.Errorf("SETTLE_HOURS=24 wrote %v, want %s", got, want)
	}
}
