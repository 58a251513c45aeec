package kubecostsim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// The simulated bill: the AWS CUR 2.0 export with split cost allocation
// data (SCAD) that the simulated cluster would have, for the same cluster,
// namespaces, pods, nodes and hours as the allocations it serves, so that
// the report and the Athena views can put Kubecost next to a bill without
// an AWS account.
//
// How its numbers relate to Kubecost's, known in advance:
//   - Every pod line is priced at SavingsPlanRate (0.72) times Kubecost's
//     price of the same resource and hour: split_line_item_split_cost is
//     0.72 × (cpuCost + cpuCostAdjustment) for the vCPU line, the same of
//     ramCost for the memory line and of gpuCost for the accelerator line,
//     as a Compute Savings Plan covering the whole fleet at a 28% discount
//     would bill it. split_line_item_public_on_demand_split_cost is
//     Kubecost's price itself (the simulator prices nodes at on-demand
//     list prices, spot nodes at their spot price).
//   - split_line_item_unused_cost is Kubecost's idle cost of the pod's
//     node in that hour (its "<cluster>/<node>/__idle__" allocation), times
//     0.72, shared among the pods on the node by their split cost of the
//     same resource, as SCAD shares an instance's unused capacity
//     (https://docs.aws.amazon.com/cur/latest/userguide/sca-eks.html). So
//     a cluster's unused cost is 0.72 × Kubecost's idle, hour by hour; a
//     node that ran no pod in an hour has no pod line to carry its idle.
//   - No discount beyond the Savings Plan: the net columns are null, as
//     CUR leaves them without discounts.
//   - Kubecost's PV, network and load balancer costs have no pod line:
//     SCAD splits compute only.
//   - Every node hour also has its instance's own line (RunInstances,
//     SavingsPlanCoveredUsage), which is not a pod line and must be
//     ignored by the bill's readers.

// SavingsPlanRate is the simulated bill's price as a share of Kubecost's.
const SavingsPlanRate = 0.72

// CUROptions shape the simulated bill.
type CUROptions struct {
	// ClusterARN is the cluster's EKS ARN, which the pod lines' resource
	// ids carry; default DefaultClusterARN.
	ClusterARN string
	// From and To are the first and last UTC day; default the days the
	// simulator holds, up to its last whole hour.
	From, To time.Time
	// Export is the Data Export's name; default "kubecost-sim-cur".
	Export string
}

// DefaultClusterARN is the simulated cluster's ARN: account 111122223333,
// the simulator's region, and its Kubecost cluster id as the EKS name.
func (s *Sim) DefaultClusterARN() string {
	return "arn:aws:eks:" + s.cfg.Region + ":111122223333:cluster/" + s.cfg.ClusterName
}

// CURLines calls fn with every line of the simulated bill, hour by hour.
// The row is reused: fn must copy what it keeps.
func (s *Sim) CURLines(ctx context.Context, o CUROptions, fn func(*curfixture.Row) error) error {
	arn := o.ClusterARN
	if arn == "" {
		arn = s.DefaultClusterARN()
	}
	parts := strings.Split(arn, ":")
	name, ok := strings.CutPrefix(parts[len(parts)-1], "cluster/")
	if len(parts) != 6 || !ok || name == "" {
		return fmt.Errorf("kubecostsim: cluster ARN %q: want arn:<partition>:eks:<region>:<account>:cluster/<name>", arn)
	}
	podPrefix := strings.Join(parts[:5], ":") + ":pod/" + name + "/"
	q := &query{agg: []field{fNamespace, fPod}, step: 1, idle: true, splitIdle: true, idleByNode: true}
	q.mask = 1<<fNamespace | 1<<fPod
	now := s.cfg.Now()
	lastHour := floorDiv(now.Unix(), 3600)
	oldest := floorDiv(now.Unix(), 86400)*24 - int64(s.cfg.RetentionDays)*24
	from, to := oldest, lastHour
	if !o.From.IsZero() {
		from = o.From.UTC().Unix() / 3600
	}
	if !o.To.IsZero() {
		to = min(to, o.To.UTC().Unix()/3600+24)
	}
	var wins []setWindow
	for h := from; h < to; h++ {
		wins = append(wins, setWindow{h, h + 1, h < oldest || h+1 > lastHour})
	}
	sink := &curSink{c: s.c, fn: fn, podPrefix: podPrefix, account: parts[4], cluster: name,
		usagePrefix: usagePrefix(parts[3]), idle: make([][3]float64, len(s.c.nodes))}
	return s.newEngine(q, sink).run(ctx, wins)
}

// WriteCURExport writes the simulated bill under dir as a Data Export
// does (curfixture.WriteExport: <export>/data/BILLING_PERIOD=YYYY-MM/...)
// and returns the keys written, relative to dir.
func (s *Sim) WriteCURExport(ctx context.Context, dir string, o CUROptions) ([]string, error) {
	var rows []curfixture.Row
	err := s.CURLines(ctx, o, func(r *curfixture.Row) error {
		rows = append(rows, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	export := o.Export
	if export == "" {
		export = "kubecost-sim-cur"
	}
	// Row groups of a few hours, so that a reader can skip them by date.
	return curfixture.WriteExport(dir, export, rows, curfixture.Options{RowGroupRows: 16384})
}

// usagePrefix is the region's prefix of usage types (USE1-EKS-EC2-vCPU-Hours).
// The rules match usage types by suffix, so an unknown region goes without.
func usagePrefix(region string) string {
	p := map[string]string{"us-east-1": "USE1-", "us-east-2": "USE2-", "us-west-1": "USW1-", "us-west-2": "USW2-",
		"eu-west-1": "EUW1-", "eu-central-1": "EUC1-", "ap-southeast-1": "APS1-", "ap-northeast-1": "APN1-"}[region]
	return p
}

// curPod is one pod's hour: Kubecost's cost of CPU, RAM and GPU.
type curPod struct {
	m    member
	cost [3]float64
}

// curSink turns one hour's pod allocations and node idle into bill lines.
type curSink struct {
	c                                        *cluster
	fn                                       func(*curfixture.Row) error
	podPrefix, account, cluster, usagePrefix string
	hour                                     int64
	pods                                     []curPod
	idle                                     [][3]float64 // per node
	row                                      curfixture.Row
	name                                     []byte
}

func (k *curSink) beginSet(w setWindow) error {
	k.hour = w.start
	k.pods = k.pods[:0]
	clear(k.idle)
	return nil
}

func (k *curSink) alloc(_ []byte, m *member, a *acc) error {
	switch {
	case m.sl != nil:
		k.pods = append(k.pods, curPod{*m, [3]float64{a.cpuCost + a.cpuAdj, a.ramCost + a.ramAdj, a.gpuCost + a.gpuAdj}})
	case m.node >= 0:
		k.idle[m.node] = [3]float64{a.cpuCost + a.cpuAdj, a.ramCost + a.ramAdj, a.gpuCost + a.gpuAdj}
	}
	return nil
}

var curUsageTypes = [3]string{"EKS-EC2-vCPU-Hours", "EKS-EC2-GB-Hours", "EKS-EC2-Accelerator-Hours"}

func (k *curSink) endSet() error {
	used := make([][3]float64, len(k.c.nodes))
	for _, p := range k.pods {
		for r := range 3 {
			used[p.m.node][r] += p.cost[r]
		}
	}
	start := time.Unix(k.hour*3600, 0).UTC()
	for _, p := range k.pods {
		for r := range 3 {
			if p.cost[r] <= 0 {
				continue
			}
			unused := k.idle[p.m.node][r] * p.cost[r] / used[p.m.node][r]
			if err := k.podLine(&p, r, start, unused); err != nil {
				return err
			}
		}
	}
	for n, u := range used {
		if u != [3]float64{} {
			if err := k.instanceLine(n, start, u[0]+u[1]+u[2]+k.idle[n][0]+k.idle[n][1]+k.idle[n][2]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *curSink) podLine(p *curPod, r int, start time.Time, unused float64) error {
	sl := p.m.sl
	k.name = append(k.name[:0], k.podPrefix...)
	k.name = append(append(k.name, sl.ctrl.ns.name...), '/')
	k.name = k.c.appendPod(k.name, sl, p.m.gen, p.m.node)
	pod := string(k.name[len(k.podPrefix)+len(sl.ctrl.ns.name)+1:])
	k.name = append(k.name, '/')
	k.name = append(k.name, podUID(sl, p.m.gen)...)
	nd := &k.c.nodes[p.m.node]
	k.row = curfixture.Row{
		AccountID: k.account, LineItemType: "Usage", Operation: "EKSPod-EC2", ProductCode: "AmazonEC2",
		UsageType: k.usagePrefix + curUsageTypes[r], ResourceID: string(k.name), ParentResourceID: instanceID(nd),
		Start: start, End: start.Add(time.Hour),
		UsageAmount: 1, SplitCost: curfixture.F(SavingsPlanRate * p.cost[r]), UnusedCost: curfixture.F(SavingsPlanRate * unused),
		PODSplit: curfixture.F(p.cost[r]), PODUnused: curfixture.F(unused),
		Tags: map[string]string{"aws_eks_cluster_name": k.cluster,
			"aws_eks_namespace": sl.ctrl.ns.name, "aws_eks_workload_name": sl.ctrl.name, "aws_eks_node": nd.name, "aws_eks_pod": pod},
	}
	return k.fn(&k.row)
}

// instanceLine is the node's own line for the hour: not a pod line.
func (k *curSink) instanceLine(n int, start time.Time, listCost float64) error {
	nd := &k.c.nodes[n]
	k.row = curfixture.Row{
		AccountID: k.account, LineItemType: "SavingsPlanCoveredUsage", Operation: "RunInstances", ProductCode: "AmazonEC2",
		UsageType: k.usagePrefix + "BoxUsage", ResourceID: instanceID(nd), Start: start, End: start.Add(time.Hour),
		UsageAmount: 1, Unblended: curfixture.F(listCost), PublicOnDemand: curfixture.F(listCost),
		SPEffective:    curfixture.F(SavingsPlanRate * listCost),
		SavingsPlanARN: "arn:aws:savingsplans::" + k.account + ":savingsplan/00000000-0000-0000-0000-000000000001",
	}
	return k.fn(&k.row)
}

// instanceID is the node's EC2 instance id (its providerID's last part).
func instanceID(nd *node) string { return nd.providerID[strings.LastIndexByte(nd.providerID, '/')+1:] }

// podUID is a stable UUID of a pod generation.
func podUID(sl *slot, gen int64) string {
	a, b := hash(sl.seed, uint64(gen)), hash(sl.seed^0x756964, uint64(gen))
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>52, b&0xffffffffffff)
}
