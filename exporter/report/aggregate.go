package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Data is everything the page shows, aggregated from the archive.
type Data struct {
	From, To  time.Time // the days covered, inclusive
	Generated time.Time
	Currency  string
	// Clusters by account, region and name everywhere: two accounts may each have a "prod".
	Clusters     []ClusterRef
	Files, Rows  int64
	Total        float64
	Namespaces   []Amount                             // cost per namespace over the range, largest first
	Daily        map[ClusterRef]map[time.Time]Amounts // cluster → day → cost per namespace
	ClusterDaily map[time.Time]map[ClusterRef]float64 // day → cost per cluster
	Workloads    []Amount                             // controllers, largest first
	Efficiency   []Efficiency                         // per namespace
	Labels       []LabelCosts                         // one per label column present
	Calendar     map[ClusterRef]map[time.Time]DayState
	Bill         *Comparison // Kubecost next to the bill; nil without a bill
}

// Amount is a named cost.
type Amount struct {
	Name string
	Cost float64
}

// Amounts is a set of named costs.
type Amounts map[string]float64

// Efficiency is a namespace's CPU and RAM cost and cost-weighted efficiencies (as Kubecost's).
type Efficiency struct {
	Namespace        string
	CPUCost, RAMCost float64
	CPUEff, RAMEff   float64
}

// LabelCosts is the cost per value of one label column.
type LabelCosts struct {
	Key    string
	Values []Amount
}

// DayState is a calendar cell.
type DayState string

// Calendar states. A Missing day can still be exported; a NoKubecostData day is gone.
const (
	Stored          DayState = "stored"
	Missing         DayState = "missing"          // Kubecost has it (within its retention), the archive does not
	NoKubecostData  DayState = "no-kubecost-data" // older than Kubecost's retention, and not in the archive
	NotYetAvailable DayState = "pending"          // not settled yet: exported by a later run
)

// ErrEmpty: the archive holds no day file (of the clusters asked for).
var ErrEmpty = errors.New("no day files of the exporter found")

// UnknownClusterError names clusters asked for that the archive lacks.
type UnknownClusterError struct {
	Unknown, Known []string
}

func (e *UnknownClusterError) Error() string {
	known := strings.Join(e.Known, ", ")
	if known == "" {
		known = "none"
	}
	return fmt.Sprintf("no day files of cluster %s in the archive (clusters found: %s)", strings.Join(e.Unknown, ", "), known)
}

// Collect reads the archive and aggregates it.
func Collect(ctx context.Context, o Options) (*Data, error) {
	if o.Today.IsZero() {
		o.Today = time.Now()
	}
	o.BackfillDays = cmp.Or(o.BackfillDays, exporter.DefaultBackfillDays)
	o.Settle = cmp.Or(o.Settle, exporter.DefaultSettle)
	o.KubecostRetentionDays = cmp.Or(o.KubecostRetentionDays, DefaultKubecostRetentionDays)
	o.Currency = cmp.Or(o.Currency, "USD")
	files, asked, err := listFiles(ctx, o)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 && o.From.IsZero() && o.To.IsZero() {
		return nil, ErrEmpty
	}
	a := newAggregator()
	for _, f := range files {
		a.startFile(f)
		rows, err := scanFile(ctx, o, f.Key, a.add)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", f.Key, err)
		}
		a.d.Rows += rows
		a.d.Files++
		if o.Logger != nil {
			o.Logger.Debug("read", "key", f.Key, "rows", rows)
		}
	}
	d := a.finish()
	d.From, d.To = o.From, o.To
	if len(files) > 0 {
		if d.From.IsZero() {
			d.From = slices.MinFunc(files, func(a, b File) int { return a.Day.Compare(b.Day) }).Day
		}
		if d.To.IsZero() {
			d.To = slices.MaxFunc(files, func(a, b File) int { return a.Day.Compare(b.Day) }).Day
		}
	}
	d.Generated = o.Today.UTC()
	d.Currency = o.Currency
	d.Clusters = clustersOf(files, asked)
	d.Calendar = calendar(files, d, o)
	if o.Bill != nil {
		if err := compareWithBill(ctx, o, d, files); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// clustersOf lists the files' clusters and those asked (in every account and region the
// archive holds them) even without a file in the range, so the calendar shows them unstored.
func clustersOf(files []File, asked []ClusterRef) []ClusterRef {
	out := slices.Clone(asked)
	for _, f := range files {
		out = append(out, f.Ref())
	}
	slices.SortFunc(out, ClusterRef.compare)
	return slices.Compact(out)
}

// calendar classifies every day of the range per cluster. Pending follows exporter.Window
// (with its settle period), so report and exporter agree on which days are due.
func calendar(files []File, d *Data, o Options) map[ClusterRef]map[time.Time]DayState {
	_, last := exporter.Window(o.Today, o.BackfillDays, o.Settle)
	kept := exporter.Midnight(o.Today).AddDate(0, 0, -o.KubecostRetentionDays)
	out := map[ClusterRef]map[time.Time]DayState{}
	for _, c := range d.Clusters {
		out[c] = map[time.Time]DayState{}
		for day := d.From; !day.After(d.To) && !d.From.IsZero(); day = day.AddDate(0, 0, 1) {
			switch {
			case day.After(last):
				out[c][day] = NotYetAvailable
			case o.KubecostDays != nil && !o.KubecostDays[c][day], o.KubecostDays == nil && day.Before(kept):
				out[c][day] = NoKubecostData
			default:
				out[c][day] = Missing
			}
		}
	}
	for _, f := range files {
		out[f.Ref()][f.Day] = Stored
	}
	return out
}

type effAcc struct{ cpu, ram, cpuW, ramW float64 }

type workload struct{ ns, kind, controller string }

type aggregator struct {
	d      *Data
	byNS   map[string]float64
	work   map[workload]float64
	eff    map[string]*effAcc
	labels map[string]map[string]float64
	order  []string // label keys in first-seen order

	dayNS      Amounts                // the current file's day
	dayCluster map[ClusterRef]float64 // the current file's day
	cluster    ClusterRef
}

func newAggregator() *aggregator {
	return &aggregator{
		d:    &Data{Daily: map[ClusterRef]map[time.Time]Amounts{}, ClusterDaily: map[time.Time]map[ClusterRef]float64{}},
		byNS: map[string]float64{}, work: map[workload]float64{}, eff: map[string]*effAcc{},
		labels: map[string]map[string]float64{},
	}
}

// startFile points the per-day sums at f's cluster and day, so add skips the lookup per row.
func (a *aggregator) startFile(f File) {
	ref := f.Ref()
	days := a.d.Daily[ref]
	if days == nil {
		days = map[time.Time]Amounts{}
		a.d.Daily[ref] = days
	}
	if days[f.Day] == nil {
		days[f.Day] = Amounts{}
	}
	if a.d.ClusterDaily[f.Day] == nil {
		a.d.ClusterDaily[f.Day] = map[ClusterRef]float64{}
	}
	a.dayNS, a.dayCluster, a.cluster = days[f.Day], a.d.ClusterDaily[f.Day], ref
}

// add sums one row, in file and row order as the summary command, so both print equal totals.
func (a *aggregator) add(labelKeys []string, r *row) {
	a.byNS[r.namespace] += r.total
	a.d.Total += r.total
	a.dayNS[r.namespace] += r.total
	a.dayCluster[a.cluster] += r.total
	if r.controller != "" {
		a.work[workload{r.namespace, r.kind, r.controller}] += r.total
	}
	if r.namespace != Idle { // idle has no usage, so no efficiency
		e := entry(a.eff, r.namespace)
		e.cpu += r.cpuCost
		e.ram += r.ramCost
		e.cpuW += r.cpuCost * r.cpuEff
		e.ramW += r.ramCost * r.ramEff
	}
	for i, k := range labelKeys {
		m := a.labels[k]
		if m == nil {
			m = map[string]float64{}
			a.labels[k] = m
			a.order = append(a.order, k)
		}
		m[r.labels[i]] += r.total
	}
}

func (a *aggregator) finish() *Data {
	d := a.d
	d.Namespaces = sorted(a.byNS)
	work := make(map[string]float64, len(a.work))
	for w, c := range a.work {
		work[w.ns+"/"+w.kind+"/"+w.controller] += c
	}
	d.Workloads = sorted(work)
	for ns, e := range a.eff {
		ef := Efficiency{Namespace: ns, CPUCost: e.cpu, RAMCost: e.ram}
		if e.cpu > 0 {
			ef.CPUEff = e.cpuW / e.cpu
		}
		if e.ram > 0 {
			ef.RAMEff = e.ramW / e.ram
		}
		d.Efficiency = append(d.Efficiency, ef)
	}
	slices.SortFunc(d.Efficiency, func(x, y Efficiency) int {
		return cmp.Or(cmp.Compare(y.CPUCost+y.RAMCost, x.CPUCost+x.RAMCost), cmp.Compare(x.Namespace, y.Namespace))
	})
	for _, k := range a.order {
		d.Labels = append(d.Labels, LabelCosts{Key: k, Values: sorted(a.labels[k])})
	}
	return d
}

// entry is m[k], a new zero V added first where m has none.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}

// sorted lists m largest first, ties by name.
func sorted(m map[string]float64) []Amount {
	out := make([]Amount, 0, len(m))
	for k, v := range m {
		out = append(out, Amount{k, v})
	}
	slices.SortFunc(out, func(a, b Amount) int { return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(a.Name, b.Name)) })
	return out
}
