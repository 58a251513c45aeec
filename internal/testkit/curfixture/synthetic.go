package curfixture

import (
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Synthetic describes a generated export for benchmarks and the demo:
// Clusters EKS clusters (cluster c in its own account, all named
// "bench"), each with PodsPerCluster EC2 pods in 20 namespaces, every pod
// running every hour of Days days from Start, with a cpu and a memory line
// per hour, and one instance line per 10 pods per hour (not pods). The
// issue's month is Clusters 10, PodsPerCluster 300, Days 30: 4,320,000 pod
// lines.
type Synthetic struct {
	Clusters, PodsPerCluster, Days int
	Start                          time.Time // a UTC day
	RowGroupRows                   int64     // 0: parquet-go's default
}

// Each calls fn for every line, hour by hour (so row groups cover
// successive hours). The rows share no maps and may be kept.
func (s Synthetic) Each(fn func(Row) error) error {
	start := s.Start.UTC()
	for h := range s.Days * 24 {
		t := start.Add(time.Duration(h) * time.Hour)
		for c := range s.Clusters {
			account := fmt.Sprintf("%012d", 100000000000+c)
			for p := range s.PodsPerCluster {
				ns := fmt.Sprintf("ns-%02d", p%20)
				pod := fmt.Sprintf("pod-%04d", p)
				instance := fmt.Sprintf("i-%08x%08x", c, p/10)
				id := fmt.Sprintf("arn:aws:eks:%s:%s:pod/bench/%s/%s/%s-uid", Region, account, ns, pod, pod)
				f := 1 + float64(p%7)/10
				for _, kind := range [2]string{"cpu", "memory"} {
					split := 0.01 * f
					if kind == "memory" {
						split /= 2
					}
					r := Row{AccountID: account, LineItemType: "Usage", Operation: "EKSPod-EC2", ProductCode: "AmazonEC2",
						UsageType: ec2Usage[kind], ResourceID: id, ParentResourceID: instance, Start: t, End: t.Add(time.Hour), UsageAmount: 1,
						SplitCost: F(split), UnusedCost: F(split / 5), NetSplit: F(split * 0.7), NetUnused: F(split / 5 * 0.7),
						PODSplit: F(split * 1.4), PODUnused: F(split / 5 * 1.4)}
					if err := fn(r); err != nil {
						return err
					}
				}
				if p%10 == 0 {
					r := Row{AccountID: account, LineItemType: "Usage", Operation: "RunInstances", ProductCode: "AmazonEC2",
						UsageType: "USE1-BoxUsage:m5.xlarge", ResourceID: instance, Start: t, End: t.Add(time.Hour), UsageAmount: 1,
						Unblended: F(0.192), PublicOnDemand: F(0.192)}
					if err := fn(r); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// WriteSynthetic writes s as one Parquet file, streaming (a few thousand
// lines in memory at a time), and returns the number of lines.
func WriteSynthetic(w io.Writer, s Synthetic) (int64, error) {
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Snappy)}
	if s.RowGroupRows > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(s.RowGroupRows))
	}
	pw := parquet.NewGenericWriter[line](w, opts...)
	buf := make([]line, 0, 4096)
	var n int64
	flush := func() error {
		_, err := pw.Write(buf)
		buf = buf[:0]
		return err
	}
	err := s.Each(func(r Row) error {
		buf = append(buf, r.line())
		n++
		if len(buf) == cap(buf) {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = pw.Close()
	}
	if err != nil {
		return n, fmt.Errorf("curfixture: synthetic: %w", err)
	}
	return n, nil
}
