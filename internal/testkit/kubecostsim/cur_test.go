package kubecostsim

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

var (
	curNow = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	curDay = time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
)

const curARN = "arn:aws:eks:us-east-1:444455556666:cluster/prod"

// curDayLines is a day of the bill of seed 42's cluster (the demo's), copied.
func curDayLines(t *testing.T, sim *Sim) []curfixture.Row {
	t.Helper()
	var rows []curfixture.Row
	err := sim.CURLines(context.Background(), CUROptions{ClusterARN: curARN, From: curDay, To: curDay}, func(r *curfixture.Row) error {
		if r.Start.Before(curDay) || !r.Start.Before(curDay.AddDate(0, 0, 1)) {
			t.Fatalf("line of %s outside the day", r.Start)
		}
		rows = append(rows, *r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func newCURSim() *Sim {
	return New(Config{Seed: 42, RetentionDays: 3, IdleNodes: 1, Now: func() time.Time { return curNow }})
}

type instHour struct {
	id   string
	hour time.Time
}

// amortized is the Cloud Intelligence Dashboards' summary_view rule for the
// lines here: covered usage at the plan's effective cost, negations and
// fees not counted, the rest unblended.
func amortized(r *curfixture.Row) float64 {
	switch r.LineItemType {
	case "SavingsPlanCoveredUsage":
		return *r.SPEffective
	case "SavingsPlanNegation", "SavingsPlanRecurringFee":
		return 0
	}
	return *r.Unblended
}

// TestCURInstanceHoursAddUp: per instance-hour, the pods' split and unused
// costs add up to the instance's amortized cost and, at public on-demand
// prices, to its public on-demand cost; every pod line's parent has an
// instance line in its hour, and only the idle node's hours have none.
func TestCURInstanceHoursAddUp(t *testing.T) {
	sim := newCURSim()
	rows := curDayLines(t, sim)
	inst, instOD := map[instHour]float64{}, map[instHour]float64{}
	pods, podsOD := map[instHour]float64{}, map[instHour]float64{}
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Operation == "EKSPod-EC2":
			k := instHour{r.ParentResourceID, r.Start}
			if r.NetSplit != nil || r.NetUnused != nil {
				t.Fatalf("pod line with net costs and no discount: %+v", r)
			}
			pods[k] += *r.SplitCost + *r.UnusedCost
			podsOD[k] += *r.PODSplit + *r.PODUnused
		case strings.HasPrefix(r.ResourceID, "i-"):
			k := instHour{r.ResourceID, r.Start}
			inst[k] += amortized(r)
			if r.PublicOnDemand != nil {
				instOD[k] += *r.PublicOnDemand
			}
		}
	}
	mix := sim.CURMix()
	if len(inst) != 24*len(mix) {
		t.Errorf("%d instance-hours, want 24 × %d nodes", len(inst), len(mix))
	}
	for k, got := range pods {
		want, ok := inst[k]
		if !ok {
			t.Fatalf("pod lines of %v with no instance line", k)
		}
		if !near(got, want) || !near(podsOD[k], instOD[k]) {
			t.Errorf("%v: split + unused %.9f, instance %.9f; at on demand %.9f, %.9f", k, got, want, podsOD[k], instOD[k])
		}
	}
	idle := mix[len(mix)-1].InstanceID
	for k := range inst {
		if _, ok := pods[k]; ok == (k.id == idle) {
			t.Errorf("%v: pod lines %v, but only the idle node %s goes without", k, ok, idle)
		}
	}
}

// TestCURPurchaseMix: the demo's cluster has a node under the Savings
// Plan, one on demand and a Spot node, each with its line types and
// rates; the plan's fee is its instances' effective cost, used whole; the
// volumes' gp3 lines cost what Kubecost gives the volumes; the instance
// lines carry the cluster's tags; nothing has a net cost.
func TestCURPurchaseMix(t *testing.T) {
	sim := newCURSim()
	mix := sim.CURMix()
	byID := map[string]CURNode{}
	kinds := map[Purchase]int{}
	for _, m := range mix {
		byID[m.InstanceID] = m
		kinds[m.Purchase]++
	}
	if kinds[PurchaseSavingsPlan] == 0 || kinds[PurchaseOnDemand] == 0 || kinds[PurchaseSpot] == 0 {
		t.Fatalf("mix %v: want each of savings-plan, on-demand and spot", kinds)
	}
	types := map[string]map[string]int{} // instance -> line type -> lines
	var fee, spEffective, volumes float64
	for _, r := range curDayLines(t, sim) {
		if r.NetUnblended != nil || r.SPNetEffective != nil || r.NetSplit != nil {
			t.Fatalf("a net cost without discounts: %+v", r)
		}
		if m, ok := byID[r.ResourceID]; ok {
			if types[r.ResourceID] == nil {
				types[r.ResourceID] = map[string]int{}
			}
			types[r.ResourceID][r.LineItemType+" "+r.UsageType]++
			if r.Tags["user_eks_cluster_name"] != "prod" || r.Tags["user_kubernetes_io_cluster_prod"] != "owned" {
				t.Errorf("instance line tags %v", r.Tags)
			}
			checkInstanceLine(t, &r, m)
			if r.LineItemType == "SavingsPlanCoveredUsage" {
				spEffective += *r.SPEffective
			}
		}
		switch {
		case r.LineItemType == "SavingsPlanRecurringFee":
			fee += *r.Unblended
			if *r.SPUsedCommitment != *r.SPTotalCommitment || *r.SPTotalCommitment != *r.Unblended {
				t.Errorf("fee line %+v: want its commitment used whole", r)
			}
		case r.UsageType == "EBS:VolumeUsage.gp3":
			if *r.Unblended != *r.PublicOnDemand || r.Product["volume_api_name"] != "gp3" || !strings.HasPrefix(r.ResourceID, "vol-") {
				t.Errorf("volume line %+v", r)
			}
			volumes += *r.Unblended
		}
	}
	for id, m := range byID {
		want := map[Purchase]map[string]int{
			PurchaseSavingsPlan: {"SavingsPlanCoveredUsage BoxUsage:" + m.InstanceType: 24, "SavingsPlanNegation BoxUsage:" + m.InstanceType: 24},
			PurchaseOnDemand:    {"Usage BoxUsage:" + m.InstanceType: 24},
			PurchaseSpot:        {"Usage SpotUsage:" + m.InstanceType: 24},
		}[m.Purchase]
		if len(types[id]) != len(want) {
			t.Errorf("%s (%s): lines %v, want %v", id, m.Purchase, types[id], want)
		}
		for k, n := range want {
			if types[id][k] != n {
				t.Errorf("%s (%s): lines %v, want %v", id, m.Purchase, types[id], want)
			}
		}
	}
	if !near(fee, spEffective) || fee == 0 {
		t.Errorf("fees %.6f, covered instances' effective cost %.6f", fee, spEffective)
	}
	pv := kubecostDay(t, sim, func(a *acc) float64 { return a.pvCost + a.pvAdj })
	if !near(volumes, pv) || volumes == 0 {
		t.Errorf("gp3 lines %.9f, Kubecost's volume cost %.9f", volumes, pv)
	}
}

// checkInstanceLine checks an instance line's costs against its rate.
func checkInstanceLine(t *testing.T, r *curfixture.Row, m CURNode) {
	t.Helper()
	list := m.HourlyOnDemand
	switch r.LineItemType {
	case "SavingsPlanNegation":
		if *r.Unblended != -list || r.PublicOnDemand != nil {
			t.Errorf("negation %+v: want -%.6f", r, list)
		}
		return
	case "SavingsPlanCoveredUsage":
		if !near(*r.SPEffective, 0.72*list) || *r.Unblended != list || r.SavingsPlanARN == "" {
			t.Errorf("covered usage %+v: want 0.72 of %.6f", r, list)
		}
	case "Usage":
		rate := map[Purchase]float64{PurchaseOnDemand: 1, PurchaseSpot: 0.3}[m.Purchase]
		if !near(*r.Unblended, rate*list) || (m.Purchase == PurchaseSpot) != (r.Extra.PricingTerm == "Spot") {
			t.Errorf("%s usage %+v: want %.2f of %.6f", m.Purchase, r, rate, list)
		}
	}
	if *r.PublicOnDemand != list {
		t.Errorf("public on demand %.6f, list %.6f", *r.PublicOnDemand, list)
	}
}

// daySink sums a number of Kubecost's pod allocations of the hours served.
type daySink struct {
	f   func(*acc) float64
	sum float64
}

func (s *daySink) beginSet(setWindow) error { return nil }
func (s *daySink) endSet() error            { return nil }
func (s *daySink) alloc(_ []byte, m *member, a *acc) error {
	if m.sl != nil {
		s.sum += s.f(a)
	}
	return nil
}

func kubecostDay(t *testing.T, sim *Sim, f func(*acc) float64) float64 {
	t.Helper()
	q := &query{agg: []field{fNamespace, fPod}, step: 1, mask: 1<<fNamespace | 1<<fPod}
	s := &daySink{f: f}
	var wins []setWindow
	for h := curDay.Unix() / 3600; h < curDay.Unix()/3600+24; h++ {
		wins = append(wins, setWindow{h, h + 1, false})
	}
	if err := sim.newEngine(q, s).run(context.Background(), wins); err != nil {
		t.Fatal(err)
	}
	return s.sum
}

// podHour is what Kubecost served of a pod in an hour.
type podHour struct {
	name string // namespace/pod
	hour int64
}

type podHourSink struct {
	c    *cluster
	hour int64
	got  map[podHour][3][2]float64 // kind -> request, usage in vCPU-, GiB-, GPU-hours
}

func (s *podHourSink) beginSet(w setWindow) error { s.hour = w.start; return nil }
func (s *podHourSink) endSet() error              { return nil }
func (s *podHourSink) alloc(name []byte, m *member, a *acc) error {
	if m.sl != nil {
		s.got[podHour{string(name), s.hour}] = [3][2]float64{{a.cpuReqCoreMin / 60, a.cpuUseCoreMin / 60},
			{a.ramReqByteMin / 60 / (1 << 30), a.ramUseByteMin / 60 / (1 << 30)}, {a.gpuHours, a.gpuHours}}
	}
	return nil
}

// TestCURSplitFollowsAWSWeights recomputes every pod line from Kubecost's
// own requests and usage of the pod-hour and the instance's capacity and
// cost, with SCAD's documented formula written out here: allocation =
// max(request, usage); resource cost = instance cost × weight × capacity /
// Σ weight × capacity with weights 9:1 (GPU 9, vCPU 0.9, memory 0.1 on
// accelerated instances); ratio = allocation / capacity; split = ratio ×
// resource cost; unused = what is left of the resource, by split cost.
func TestCURSplitFollowsAWSWeights(t *testing.T) {
	sim := newCURSim()
	served := &podHourSink{c: sim.c, got: map[podHour][3][2]float64{}}
	q := &query{agg: []field{fNamespace, fPod}, step: 1, mask: 1<<fNamespace | 1<<fPod}
	var wins []setWindow
	for h := curDay.Unix() / 3600; h < curDay.Unix()/3600+24; h++ {
		wins = append(wins, setWindow{h, h + 1, false})
	}
	if err := sim.newEngine(q, served).run(context.Background(), wins); err != nil {
		t.Fatal(err)
	}
	byID := map[string]CURNode{}
	for _, m := range sim.CURMix() {
		byID[m.InstanceID] = m
	}
	rows := curDayLines(t, sim)
	type res struct {
		id   instHour
		kind int
	}
	alloc := map[res]float64{}
	for _, r := range rows {
		if r.Operation == "EKSPod-EC2" {
			alloc[res{instHour{r.ParentResourceID, r.Start}, curKind(r.UsageType)}] += *r.Extra.SplitUsage
		}
	}
	lines := 0
	for _, r := range rows {
		if r.Operation != "EKSPod-EC2" {
			continue
		}
		lines++
		kind := curKind(r.UsageType)
		m := byID[r.ParentResourceID]
		parts := strings.Split(r.ResourceID, "/")
		kc, ok := served.got[podHour{parts[2] + "/" + parts[3], r.Start.Unix() / 3600}]
		if !ok {
			t.Fatalf("pod line %s: no such pod-hour in Kubecost", r.ResourceID)
		}
		want := math.Max(kc[kind][0], kc[kind][1])
		capacity := [3]float64{m.VCPU, m.MemoryGiB, m.GPU}
		w := [3]float64{9, 1, 0}
		if m.GPU > 0 {
			w = [3]float64{0.9, 0.1, 9}
		}
		resCost := m.HourlyAmortized * w[kind] * capacity[kind] / (w[0]*capacity[0] + w[1]*capacity[1] + w[2]*capacity[2])
		total := alloc[res{instHour{r.ParentResourceID, r.Start}, kind}]
		ratio := want / math.Max(capacity[kind], total)
		split := ratio * resCost
		unused := (resCost - total/math.Max(capacity[kind], total)*resCost) * split / (total / math.Max(capacity[kind], total) * resCost)
		if !near(*r.Extra.SplitUsage, want) || !near(*r.SplitUsageRatio, ratio) || !near(*r.SplitCost, split) || !near(*r.UnusedCost, unused) {
			t.Fatalf("%s %s: usage %.9f ratio %.9f split %.9f unused %.9f; want %.9f %.9f %.9f %.9f",
				r.ResourceID, r.UsageType, *r.Extra.SplitUsage, *r.SplitUsageRatio, *r.SplitCost, *r.UnusedCost, want, ratio, split, unused)
		}
	}
	if lines == 0 {
		t.Fatal("no pod lines")
	}
}

func curKind(usageType string) int {
	for r, s := range curUsageTypes {
		if strings.HasSuffix(usageType, s) {
			return r
		}
	}
	return -1
}

// TestSCADSharesAWSExamples: the unit costs of AWS's two worked examples
// come out of scadShares as the pages print them: an m5.xlarge (4 vCPU,
// 16 GB) at $1/hour costs $0.17 a vCPU-hour and $0.02 a GB-hour; a
// p3.16xlarge (8 GPU, 64 vCPU, 488 GB) at $10/hour $0.504 a GPU-hour,
// $0.05 a vCPU-hour and 0.1 × $0.056 a GB-hour (the page prints the
// product as $0.00506; it is $0.0056).
func TestSCADSharesAWSExamples(t *testing.T) {
	for _, c := range []struct {
		cost     float64
		capacity [3]float64
		want     [3]float64 // per unit, as printed
		digits   [3]int
	}{
		{1, [3]float64{4, 16, 0}, [3]float64{0.17, 0.02, 0}, [3]int{2, 2, 2}},
		{10, [3]float64{64, 488, 8}, [3]float64{0.05, 0.0056, 0.504}, [3]int{2, 4, 3}},
	} {
		one := [][3]float64{{1, 1, 0}}
		if c.capacity[2] > 0 {
			one[0][2] = 1
		}
		ratio, split, unused := make([][3]float64, 1), make([][3]float64, 1), make([][3]float64, 1)
		scadShares(c.capacity, one, ratio, split, unused)
		for r := range 3 {
			got := strconv.FormatFloat(c.cost*split[0][r], 'f', c.digits[r], 64)
			if want := strconv.FormatFloat(c.want[r], 'f', c.digits[r], 64); got != want {
				t.Errorf("%v kind %d: %s a unit-hour, AWS's page %s", c.capacity, r, got, want)
			}
		}
		if sum := split[0][0] + split[0][1] + split[0][2] + unused[0][0] + unused[0][1] + unused[0][2]; !near(sum, 1) {
			t.Errorf("%v: split + unused = %.12f of the instance", c.capacity, sum)
		}
	}
}

// TestCURExportColumns reads the written export with arrow-go (pqcheck,
// which shares no code with the writer): the fixture's columns, then the
// split usage, Savings Plan and pricing term columns, nullable, as doubles
// and a string.
func TestCURExportColumns(t *testing.T) {
	sim := newCURSim()
	dir := t.TempDir()
	keys, err := sim.WriteCURExport(context.Background(), dir, CUROptions{ClusterARN: curARN, From: curDay, To: curDay})
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v: %v", keys, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, keys[0]))
	if err != nil {
		t.Fatal(err)
	}
	f, err := pqcheck.OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var base bytes.Buffer
	if err := curfixture.WriteParquet(&base, nil, curfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	plain, err := pqcheck.OpenBytes(base.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	extra := []string{"split_line_item_split_usage", "split_line_item_reserved_usage", "split_line_item_actual_usage",
		"savings_plan_savings_plan_rate", "pricing_term"}
	if want := append(plain.Names(), extra...); !slices.Equal(f.Names(), want) {
		t.Fatalf("columns\n%v\nwant\n%v", f.Names(), want)
	}
	for _, name := range extra {
		c, _ := f.Column(name)
		want := c.Physical == "DOUBLE"
		if name == "pricing_term" {
			want = c.Physical == "BYTE_ARRAY" && c.String
		}
		if !want || c.Repetition != "optional" {
			t.Errorf("%s: %+v", name, c)
		}
	}
	usage, err := f.Values("split_line_item_split_usage")
	if err != nil {
		t.Fatal(err)
	}
	set := 0
	for _, v := range usage {
		if x, ok := v.(float64); ok && x > 0 {
			set++
		}
	}
	if set == 0 {
		t.Error("no split usage in the file")
	}
}
