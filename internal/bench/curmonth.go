package bench

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/parquetout"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// `kse-bench cur-month` writes the synthetic month the report's bench
// (.ci/bench-cur.sh, docs/performance.md "The report and the bill") reads:
// a CUR 2.0 export with split cost allocation data of Clusters EKS clusters
// × Pods pods on 30 nodes, a CPU and a memory line per pod and hour for
// Days days (10 × 300 × 24 × 30 × 2 = 4.32M pod lines by default), plus
// each node's own hourly line (Savings Plan covered), which is not a pod
// line, plus Other times as many lines of the organisation's other
// services (curfixture.OtherServices: storage, databases, functions, data
// transfer; 20× by default, 90.7M lines), which the bill's reader must
// skip; and the archive of the same clusters and days, a row per pod and
// day and an idle row per node and day, with Kubecost's costs at list
// price (the bill is 0.72 of it).
//
// Files are written as a Data Export writes a large billing period: lines
// in time order across numbered files of LinesPerFile lines.

// CURMonth describes the synthetic month.
type CURMonth struct {
	Clusters, Namespaces, PodsPerNamespace, PodsPerNode, Days int
	LinesPerFile, RowGroupRows                                int
	Other                                                     int       // lines of other services per cluster line
	Start                                                     time.Time // first day (UTC)
}

func (m CURMonth) pods() int { return m.Namespaces * m.PodsPerNamespace }

func (m CURMonth) nodes() int { return (m.pods() + m.PodsPerNode - 1) / m.PodsPerNode }

func (m CURMonth) cluster(c int) (account, name string) {
	return []string{"111122223333", "444455556666"}[c%2], fmt.Sprintf("bench-%02d", c)
}

// price is a pod's deterministic Kubecost CPU (r = 0) or memory (r = 1)
// cost in an hour: a few cents, varying by pod and hour.
func price(c, p, h, r int) float64 {
	x := uint64(c)*1_000_003 + uint64(p)*7919 + uint64(h)*104729 + uint64(r)*15485863
	x ^= x >> 13
	x *= 0x9e3779b97f4a7c15
	return 0.002 + float64(x>>40)/float64(1<<24)*0.04*float64(2-r)
}

// writeCUR writes the export under dir/bench-cur/data/BILLING_PERIOD=.../.
func (m CURMonth) writeCUR(dir string) (lines int64, err error) {
	var rows []curfixture.Row
	file := 0
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		file++
		s := rows[0].Start
		path := filepath.Join(dir, "bench-cur", "data", "BILLING_PERIOD="+s.Format("2006-01"), fmt.Sprintf("bench-cur-%05d.snappy.parquet", file))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		err = curfixture.WriteParquet(f, rows, curfixture.Options{RowGroupRows: int64(m.RowGroupRows)})
		lines += int64(len(rows))
		rows = rows[:0]
		return cmp.Or(err, f.Close())
	}
	tags := make([]map[string]string, m.Clusters*m.pods())
	for c := range m.Clusters {
		_, name := m.cluster(c)
		for p := range m.pods() {
			tags[c*m.pods()+p] = map[string]string{"aws_eks_cluster_name": name,
				"aws_eks_namespace": fmt.Sprintf("ns-%02d", p/m.PodsPerNamespace), "aws_eks_workload_name": fmt.Sprintf("app-%03d", p)}
		}
	}
	usage := [2]string{"USE1-EKS-EC2-vCPU-Hours", "USE1-EKS-EC2-GB-Hours"}
	other := &curfixture.OtherServices{}
	for h := range m.Days * 24 {
		start := m.Start.Add(time.Duration(h) * time.Hour)
		for c := range m.Clusters {
			account, name := m.cluster(c)
			nodeUsed := make([]float64, m.nodes())
			for p := range m.pods() {
				id := fmt.Sprintf("arn:aws:eks:us-east-1:%s:pod/%s/ns-%02d/app-%03d-7d4b9c/%08x-0000-4000-8000-%012x",
					account, name, p/m.PodsPerNamespace, p, c*1000+p, p)
				node := p / m.PodsPerNode
				for r := range 2 {
					list := price(c, p, h, r)
					nodeUsed[node] += list
					rows = append(rows, curfixture.Row{AccountID: account, LineItemType: "Usage", Operation: "EKSPod-EC2",
						ProductCode: "AmazonEC2", UsageType: usage[r], ResourceID: id,
						ParentResourceID: fmt.Sprintf("i-0%08x%08x", c, node), Start: start, End: start.Add(time.Hour), UsageAmount: 1,
						SplitCost: curfixture.F(0.72 * list), UnusedCost: curfixture.F(0.72 * 0.1 * list),
						PODSplit: curfixture.F(list), PODUnused: curfixture.F(0.1 * list), Tags: tags[c*m.pods()+p]})
				}
			}
			for n, used := range nodeUsed {
				rows = append(rows, curfixture.Row{AccountID: account, LineItemType: "SavingsPlanCoveredUsage", Operation: "RunInstances",
					ProductCode: "AmazonEC2", UsageType: "USE1-BoxUsage:m5.4xlarge", ResourceID: fmt.Sprintf("i-0%08x%08x", c, n),
					Start: start, End: start.Add(time.Hour), UsageAmount: 1, Unblended: curfixture.F(1.1 * used),
					SPEffective: curfixture.F(0.72 * 1.1 * used)})
			}
			for i := range m.Other * (2*m.pods() + m.nodes()) {
				rows = append(rows, other.Line(account, c*1_000_000+i, start))
			}
		}
		if len(rows) >= m.LinesPerFile {
			if err := flush(); err != nil {
				return lines, err
			}
		}
	}
	return lines, flush()
}

// writeArchive writes the archive: per cluster and day, a row per pod and
// an idle row per node, as the exporter's writer writes them.
func (m CURMonth) writeArchive(dir string) (files int, err error) {
	for c := range m.Clusters {
		account, name := m.cluster(c)
		arn := "arn:aws:eks:us-east-1:" + account + ":cluster/" + name
		for d := range m.Days {
			day := m.Start.AddDate(0, 0, d)
			if err := m.archiveDay(dir, c, arn, account, name, day, d); err != nil {
				return files, err
			}
			files++
		}
	}
	return files, nil
}

func (m CURMonth) archiveDay(dir string, c int, arn, account, name string, day time.Time, d int) error {
	p := schema.NewProjection(arn, name, nil, nil)
	path := filepath.Join(dir, filepath.FromSlash(exporter.Layout{Account: account, Region: "us-east-1", Cluster: name}.Key(day, exporter.Snappy)))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := parquetout.NewWriter(out, p, parquetout.Options{})
	if err != nil {
		out.Close()
		return err
	}
	rec := p.NewRecord()
	write := func(allocName, ns string, cpu, ram, pv float64) error {
		p.Reset(rec)
		rec.Name = allocName
		rec.Start, rec.End = day.UnixMilli(), day.Add(24*time.Hour).UnixMilli()
		rec.Props[schema.PropNamespace] = ns
		rec.Num[schema.DoubleIndex("cpuCost")] = cpu
		rec.Num[schema.DoubleIndex("ramCost")] = ram
		rec.Num[schema.DoubleIndex("pvCost")] = pv
		rec.Num[schema.DoubleIndex("totalCost")] = cpu + ram + pv
		p.Finish(rec)
		return w.Write(rec)
	}
	for pod := range m.pods() {
		var cpu, ram float64
		for h := d * 24; h < (d+1)*24; h++ {
			cpu += price(c, pod, h, 0)
			ram += price(c, pod, h, 1)
		}
		ns := fmt.Sprintf("ns-%02d", pod/m.PodsPerNamespace)
		if err := write(fmt.Sprintf("%s/node-%d/%s/app-%03d-7d4b9c/app", name, pod/m.PodsPerNode, ns, pod), ns, cpu, ram, 0.05); err != nil {
			return errors.Join(err, out.Close())
		}
	}
	for n := range m.nodes() {
		if err := write(fmt.Sprintf("%s/node-%d/__idle__", name, n), "", 0.5, 0.2, 0); err != nil {
			return errors.Join(err, out.Close())
		}
	}
	return errors.Join(w.Close(), out.Close())
}

// curMonthMain is `kse-bench cur-month`.
func curMonthMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kse-bench cur-month", flag.ContinueOnError)
	fs.SetOutput(stderr)
	m := CURMonth{Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}
	dir := fs.String("dir", ".cache/bench-cur", "where to write archive/ and cur/")
	fs.IntVar(&m.Clusters, "clusters", 10, "EKS clusters")
	fs.IntVar(&m.Namespaces, "namespaces", 20, "namespaces per cluster")
	fs.IntVar(&m.PodsPerNamespace, "pods-per-namespace", 15, "pods per namespace")
	fs.IntVar(&m.PodsPerNode, "pods-per-node", 10, "pods per node")
	fs.IntVar(&m.Other, "other", 20, "lines of other services per line of the clusters")
	fs.IntVar(&m.Days, "days", 30, "days, from 2026-10-01")
	fs.IntVar(&m.LinesPerFile, "lines-per-file", 1_000_000, "CUR lines per Parquet file (about)")
	fs.IntVar(&m.RowGroupRows, "row-group-rows", 131_072, "CUR lines per row group")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if m.Clusters < 1 || m.pods() < 1 || m.PodsPerNode < 1 || m.Days < 1 || m.Days > 31 || m.Other < 0 {
		fmt.Fprintln(stderr, "kse-bench cur-month: sizes must be positive, days at most 31")
		return 2
	}
	start := time.Now()
	lines, err := m.writeCUR(filepath.Join(*dir, "cur"))
	if err != nil {
		fmt.Fprintf(stderr, "kse-bench cur-month: %v\n", err)
		return 1
	}
	files, err := m.writeArchive(filepath.Join(*dir, "archive"))
	if err != nil {
		fmt.Fprintf(stderr, "kse-bench cur-month: %v\n", err)
		return 1
	}
	podLines := int64(m.Clusters * m.pods() * 2 * 24 * m.Days)
	nodeLines := int64(m.Clusters * m.nodes() * 24 * m.Days)
	fmt.Fprintf(stdout, "cur-month: %d CUR lines (%d pod lines of %d clusters x %d pods x 24 h x %d days x cpu+memory, %d node lines of %d nodes, %d lines of other services), %d archive files, in %s\n",
		lines, podLines, m.Clusters, m.pods(), m.Days, nodeLines, m.Clusters*m.nodes(), lines-podLines-nodeLines, files, time.Since(start).Round(time.Second))
	return 0
}
