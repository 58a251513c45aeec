package e2e_test

import (
	"context"
	"fmt"
	"math"
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
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pushgw"
)

// wantFleetKeys is every member's available days among CCA's days, under
// each member's own keys, computed here from the simulator alone.
func (h *harness) wantFleetKeys(backfill int) map[string][]time.Time {
	at := h.now().Unix()
	start := (at - int64(backfill-1)*86400) / 86400 * 86400
	end := (at - 2*86400) / 86400 * 86400
	out := map[string][]time.Time{}
	for _, m := range h.fleet.Fleet.Members() {
		for _, d := range h.fleet.Fleet.AvailableDays(m.Config.ClusterName) {
			if u := d.Unix(); u >= start && u < end {
				out[m.Config.ClusterName] = append(out[m.Config.ClusterName], d)
			}
		}
	}
	return out
}

func TestFederatedEndToEndMinIO(t *testing.T) {
	h := newFleetHarness(t, nil)
	members := h.fleet.Fleet.Members()
	if len(members) < 4 {
		t.Fatalf("%d clusters, want at least 4", len(members))
	}
	want := h.wantFleetKeys(20)
	var wantKeys []string
	accounts, regions := map[string]bool{}, map[string]bool{}
	for _, m := range members {
		l := layoutOf(m)
		accounts[l.Account], regions[l.Region] = true, true
		for _, d := range want[m.Config.ClusterName] {
			wantKeys = append(wantKeys, l.Key(d, exporter.Snappy))
		}
	}
	slices.Sort(wantKeys)
	if len(accounts) < 2 || len(regions) < 2 {
		t.Fatalf("the fleet spans %d accounts and %d regions, want 2 and 2", len(accounts), len(regions))
	}

	code, logs := h.run(nil)
	if code != cli.ExitOK {
		t.Fatalf("run 1 exit %d\n%s", code, logs)
	}
	after1 := h.objects()
	if got := mapKeys(after1); !slices.Equal(got, wantKeys) {
		t.Fatalf("run 1 wrote\n%v\nwant\n%v", got, wantKeys)
	}
	fleetSummary(t, logs, len(wantKeys), 0)

	// Every request of the export phase asked for one cluster, and the
	// primary built each of those responses from that cluster alone.
	exports := 0
	for _, r := range h.fleet.Fleet.Requests() {
		if r.Query.Get("aggregate") == "cluster" && r.Query.Get("filter") == "" {
			continue // the one availability query, a row per cluster-day
		}
		exports++
		f := r.Query.Get("filter")
		if len(r.Clusters) != 1 || f != `cluster:"`+r.Clusters[0]+`"` {
			t.Errorf("export request %s: filter %q, response built from %v", r.Query.Get("window"), f, r.Clusters)
		}
	}
	if exports != len(wantKeys) {
		t.Errorf("%d export requests, want one per cluster-day (%d)", exports, len(wantKeys))
	}

	// Each file holds its cluster's rows, named from its ARN, equal to
	// the simulator's truth (independent reader).
	for _, m := range members {
		for _, d := range want[m.Config.ClusterName] {
			h.checkFleetFile(t, m, d)
		}
	}

	// Run 2 writes nothing.
	code, logs = h.run(nil)
	if code != cli.ExitOK || !mapsEqual(after1, h.objects()) {
		t.Fatalf("run 2 exit %d or changed the bucket\n%s", code, logs)
	}
	fleetSummary(t, logs, 0, 0)

	// Deleting one cluster-day heals exactly that one.
	m := members[2]
	gone := layoutOf(m).Key(want[m.Config.ClusterName][1], exporter.Snappy)
	if _, err := h.s3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(gone)}); err != nil {
		t.Fatal(err)
	}
	h.fleet.Fleet.ResetRequests()
	code, logs = h.run(nil)
	after3 := h.objects()
	if code != cli.ExitOK || len(after3) != len(after1) {
		t.Fatalf("run 3 exit %d, %d objects, want %d\n%s", code, len(after3), len(after1), logs)
	}
	for k, o := range after1 {
		if k != gone && after3[k] != o {
			t.Errorf("run 3 touched %s", k)
		}
	}
	if _, ok := after3[gone]; !ok {
		t.Errorf("run 3 did not restore %s", gone)
	}
	fleetSummary(t, logs, 1, 0)
	if n := len(h.fleet.Fleet.Requests()); n != 2 {
		t.Errorf("run 3 sent %d requests, want the availability query and one cluster-day", n)
	}
}

func mapKeys(m map[string]object) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkFleetFile reads member m's file of day d with the independent
// reader: rows and per-namespace totalCost equal the member's truth, and
// every row names m's cluster as its ARN says.
func (h *harness) checkFleetFile(t *testing.T, m kubecostsim.Member, d time.Time) {
	t.Helper()
	l := layoutOf(m)
	key := l.Key(d, exporter.Snappy)
	proj := schema.NewProjection(m.ARN(), l.Cluster, []string{labelKey}, nil)
	f := pqcheck.Check(t, h.get(key), proj)
	truth, err := h.fleet.Fleet.TruthFor(m.Config.ClusterName, dayQuery(d))
	if err != nil {
		t.Fatal(err)
	}
	count, byNS := 0, map[string]float64{}
	for _, tr := range truth {
		count += tr.Count
		for ns, c := range tr.ByNamespace {
			byNS[ns] += c
		}
	}
	if f.NumRows != int64(count) || count == 0 {
		t.Errorf("%s: %d rows, truth %d", key, f.NumRows, count)
	}
	sums, err := f.SumBy("properties.namespace", "totalCost")
	if err != nil {
		t.Fatal(err)
	}
	for ns, w := range byNS {
		if math.Abs(sums[ns]-w) > 1e-6*math.Abs(w) {
			t.Errorf("%s: namespace %q totalCost %.9f, truth %.9f", key, ns, sums[ns], w)
		}
	}
	for col, w := range map[string]string{"properties.eksClusterName": l.Cluster, "properties.clusterid": m.ARN(), "properties.cluster": m.Config.ClusterName} {
		vals, err := f.Strings(col)
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(vals, func(v string) bool { return v != w }); i >= 0 {
			t.Errorf("%s: row %d has %s %q, want %q", key, i, col, vals[i], w)
		}
	}
}

// An unmapped cluster is skipped with a warning naming it; a cluster whose
// prefix the bucket policy denies fails alone, the others land, exit 1;
// and the next run, allowed, resumes only the failed cluster-days.
func TestFederatedIsolationMinIO(t *testing.T) {
	h := newFleetHarness(t, nil)
	members := h.fleet.Fleet.Members()
	unmapped, denied := members[2], members[1]
	var arns []string
	for _, m := range members {
		if m.Config.ClusterName != unmapped.Config.ClusterName {
			arns = append(arns, m.Config.ClusterName+"="+m.ARN())
		}
	}
	h.env["CLUSTER_ARNS"] = strings.Join(arns, ",")

	// A writer whose policy denies PutObject under the denied cluster's
	// account/region prefix, as a bucket policy scoped per prefix does.
	deniedPrefix := layoutOf(denied).PartitionPrefix()
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::%[1]s","arn:aws:s3:::%[1]s/*"]},
		{"Effect":"Deny","Action":["s3:PutObject"],"Resource":["arn:aws:s3:::%[1]s/%[2]s*"]}]}`, bucket, deniedPrefix)
	h.minio.AddUser(t, "fleet-writer", "fleet-writer-secret-1", policy)
	t.Setenv("AWS_ACCESS_KEY_ID", "fleet-writer")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fleet-writer-secret-1")

	want := h.wantFleetKeys(20)
	code, logs := h.run(nil)
	if code != cli.ExitRuntime {
		t.Fatalf("exit %d, want 1\n%s", code, logs)
	}
	if !strings.Contains(logs, `"kubecost_cluster":"`+unmapped.Config.ClusterName+`"`) || strings.Count(logs, "the cluster map lacks") != 1 {
		t.Errorf("no single warning naming the unmapped cluster %s", unmapped.Config.ClusterName)
	}
	objs := h.objects()
	landed := 0
	for _, m := range members {
		for _, d := range want[m.Config.ClusterName] {
			_, ok := objs[layoutOf(m).Key(d, exporter.Snappy)]
			switch id := m.Config.ClusterName; {
			case id == unmapped.Config.ClusterName || id == denied.Config.ClusterName:
				if ok {
					t.Errorf("%s %s was written", id, d.Format(time.DateOnly))
				}
			case !ok:
				t.Errorf("%s %s is missing", id, d.Format(time.DateOnly))
			default:
				landed++
			}
		}
	}
	last := fleetSummary(t, logs, landed, len(want[denied.Config.ClusterName]))
	if last["unmapped_clusters"] != float64(1) || !strings.Contains(fmt.Sprint(last["failed_cluster_days"]), denied.Config.ClusterName+"/") {
		t.Errorf("summary %v: want unmapped_clusters=1 and failed cluster-days of %s", last, denied.Config.ClusterName)
	}

	// Allowed again, the next run writes exactly the denied cluster's days.
	t.Setenv("AWS_ACCESS_KEY_ID", h.minio.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", h.minio.SecretKey)
	code, logs = h.run(nil)
	if code != cli.ExitOK {
		t.Fatalf("healing run exit %d\n%s", code, logs)
	}
	fleetSummary(t, logs, len(want[denied.Config.ClusterName]), 0)
	if n := len(h.objects()) - len(objs); n != len(want[denied.Config.ClusterName]) {
		t.Errorf("healing run added %d objects, want %d", n, len(want[denied.Config.ClusterName]))
	}
}

// A primary that ignores the cluster filter returns every cluster's rows:
// each cluster-day fails, nothing is written under a wrong name.
func TestFederatedIgnoredFilter(t *testing.T) {
	h := newFleetHarness(t, func(c *kubecostsim.FleetConfig) { c.IgnoreClusterFilter = true })
	code, logs := h.run(map[string]string{"BACKFILL_PERIOD_DAYS": "5"})
	if code != cli.ExitRuntime || !strings.Contains(logs, "ignored the cluster filter") {
		t.Fatalf("exit %d, want 1 with 'ignored the cluster filter'\n%s", code, logs)
	}
	if objs := h.objects(); len(objs) != 0 {
		t.Errorf("%d objects written from unfiltered responses: %v", len(objs), mapKeys(objs))
	}
	fleetSummary(t, logs, 0, len(h.fleet.Fleet.Members())*2)
}

// Setting CLUSTER_ID and the federated map together, or a map with an
// invalid ARN, is a config error: exit 2, one line naming the variable,
// before any network call (the endpoint is closed).
func TestFederatedConfigErrors(t *testing.T) {
	arn := "arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu"
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CLUSTER_ID": arn, "CLUSTER_ARNS": "prod-eu-1=" + arn}, "CLUSTER_ID="},
		{map[string]string{"CLUSTER_ARNS": "prod-eu-1=prod-eu"}, "CLUSTER_ARNS="},
		{map[string]string{"CLUSTER_MAP_FILE": "/nonexistent/clusters.yaml"}, "CLUSTER_MAP_FILE="},
	} {
		tc.env["S3_BUCKET_NAME"] = bucket
		tc.env["KUBECOST_API_ENDPOINT"] = "http://" + closedAddr(t)
		var out strings.Builder
		code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, &out, cli.Hooks{})
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if code != cli.ExitConfig || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 and one line naming %s", tc.env, code, out.String(), tc.want)
		}
	}
}

// TestFederatedKubecostDownPushesFailed: with the federated Kubecost
// unreachable, the run fails before planning, and every mapped cluster's
// group says so: last_run_success 0, the last success and the hole count
// of the previous run kept, not a fresh success and a hole count of zero.
func TestFederatedKubecostDownPushesFailed(t *testing.T) {
	h := newFleetHarness(t, nil)
	gw := pushgw.Start(t)
	h.env["PUSHGATEWAY_URL"] = gw.URL
	h.env["BACKFILL_PERIOD_DAYS"] = "4"
	if code, logs := h.run(map[string]string{"RUN_ID": "kse-1"}); code != cli.ExitOK {
		t.Fatalf("first run: exit %d\n%s", code, logs)
	}
	members := h.fleet.Fleet.Members()
	success := map[string]float64{}
	for _, m := range members {
		g := gw.Group(map[string]string{"job": "kubecost-s3-exporter", "cluster": layoutOf(m).Cluster})
		success[layoutOf(m).Cluster] = gauge(t, g, "last_success_timestamp_seconds", nil)
	}
	pushes := len(gw.Pushes())
	code, logs := h.run(map[string]string{"RUN_ID": "kse-2", "KUBECOST_API_ENDPOINT": "http://" + closedAddr(t), "KUBECOST_MAX_RETRIES": "0"})
	if code != cli.ExitRuntime {
		t.Fatalf("run with Kubecost down: exit %d, want 1\n%s", code, logs)
	}
	if n := len(gw.Pushes()) - pushes; n != len(members) {
		t.Errorf("%d pushes for %d clusters", n, len(members))
	}
	for _, m := range members {
		name := layoutOf(m).Cluster
		g := gw.Group(map[string]string{"job": "kubecost-s3-exporter", "cluster": name})
		if got := gauge(t, g, "last_run_success", nil); got != 0 {
			t.Errorf("%s: last_run_success = %v with Kubecost down", name, got)
		}
		if got := gauge(t, g, "last_success_timestamp_seconds", nil); got != success[name] {
			t.Errorf("%s: last success moved from %v to %v", name, success[name], got)
		}
		if got := runLabels(g); len(got) != 1 || got[0] != "kse-2" {
			t.Errorf("%s: run labels %v, want [kse-2]", name, got)
		}
		for _, p := range gw.Pushes()[pushes:] {
			if p.Grouping["cluster"] != name {
				continue
			}
			for _, fam := range []string{"archive_missing_days", "last_archive_complete_timestamp_seconds", "last_success_timestamp_seconds"} {
				if _, ok := p.Families["kubecost_s3_exporter_"+fam]; ok {
					t.Errorf("%s: the failed run pushed %s", name, fam)
				}
			}
		}
	}
}
