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
// namespaces, pods, nodes, volumes and hours as the allocations it serves,
// so that the report and the Athena views can put Kubecost next to a bill
// without an AWS account.
//
// What each number is, known in advance (cur_mix.go computes it):
//   - The public on-demand price of a node's instance is the simulator's
//     own list price of the node, the one Kubecost prices it at: vCPUs ×
//     the node's CPU price + memory × its RAM price + GPUs × its GPU price,
//     per hour. So Kubecost's split at the bill's public on-demand prices
//     is Kubecost's own cost up to its daily adjustments (cpuCostAdjustment
//     and ramCostAdjustment, -5% to +2%): the "pricing" step is about 0.
//   - Each node is bought one way (CURMix): a node whose capacity-type
//     label says spot is Spot (line type Usage, SpotUsage:<type>, cost
//     SpotRate = 0.30 of on demand: 70% off); the other nodes, in node
//     order, alternate between a Compute Savings Plan (the first, third,
//     ...: SavingsPlanCoveredUsage with savings_plan_savings_plan_effective_cost
//     = SavingsPlanRate = 0.72 of on demand, 28% off, and its
//     SavingsPlanNegation line) and on demand (the second, fourth, ...:
//     Usage, BoxUsage:<type>, at the list price). The plan's commitment is
//     exactly what its instances use each hour: one SavingsPlanRecurringFee
//     line per hour whose cost, total commitment and used commitment are
//     the covered instances' effective cost (no unused commitment), as
//     https://docs.aws.amazon.com/cur/latest/userguide/cur-sp.html lays the
//     three line types out. The amortized cost of an instance-hour (the
//     Cloud Intelligence Dashboards' summary_view rule) is therefore 0.72,
//     1 or 0.30 of its list price, and its unblended cost the same once the
//     negation and the fee are added.
//   - No other discount: every net column is null, as CUR leaves them
//     without discounts (EDP, credits).
//   - Each statefulset volume (the archive's pvs providerID, vol-...) has
//     an hourly gp3 line (Usage, EBS:VolumeUsage.gp3, CreateVolume-Gp3) of
//     its size / 730 GB-months at $0.08 per GB-month: the price Kubecost
//     gives the volume, hour by hour.
//   - The instance lines carry the cluster in resource_tags: user tags
//     user_eks_cluster_name = <EKS name> and
//     user_kubernetes_io_cluster_<name> = owned (the tag every node of the
//     cluster has, https://docs.aws.amazon.com/eks/latest/userguide/worker.html);
//     volumes carry the latter and the EBS CSI driver's
//     kubernetes.io/created-for/pv/name and .../pvc/namespace.
//   - The pod lines follow SCAD's documented split, not Kubecost's
//     (https://docs.aws.amazon.com/cur/latest/userguide/example-split-cost-allocation-data.html,
//     https://docs.aws.amazon.com/cur/latest/userguide/sca-eks.html): a
//     pod's allocated vCPU and memory in the hour is the larger of its
//     request and its usage (split_line_item_split_usage, from
//     split_line_item_reserved_usage and split_line_item_actual_usage); the
//     instance-hour's amortized cost is shared between vCPU and memory by
//     relative unit weights 9:1 per vCPU and GB of the instance (GPU 9,
//     vCPU 0.9, memory 0.1 on accelerated instances,
//     https://docs.aws.amazon.com/cur/latest/userguide/example-accelerated-instances.html);
//     split_line_item_split_usage_ratio is the allocation over the
//     instance's capacity; the split cost is the ratio times that
//     resource's cost; what the pods leave of a resource (the unused cost)
//     is shared among them by their split cost of it. The public on-demand
//     split and unused costs are the same shares of the list price, and
//     split_line_item_parent_resource_id is the instance id. So per
//     instance-hour with pods, split + unused = the instance's amortized
//     cost. Two cases the pages leave open, settled so that the instance
//     stays whole: pods allocated more than the instance has share it by
//     their allocation; a resource no pod uses (a GPU idle for an hour)
//     goes to the pods by their split cost of the others.
//   - An instance-hour without pods (IdleNodes) has its instance lines and
//     no pod line. Kubecost's network and load balancer costs have no line.

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
// The row is reused: fn must copy what it keeps (its maps are shared and
// must not be changed).
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
	q := &query{agg: []field{fNamespace, fPod}, step: 1}
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
	return s.newEngine(q, newCURSink(s.c, fn, parts, name)).run(ctx, wins)
}

// WriteCURExport writes the simulated bill under dir as a Data Export
// does (curfixture.WriteExport: <export>/data/BILLING_PERIOD=YYYY-MM/...),
// with the split usage and Savings Plan columns (curfixture.Extra), and
// returns the keys written, relative to dir.
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
	return curfixture.WriteExport(dir, export, rows, curfixture.Options{RowGroupRows: 16384, Extra: true})
}

// usagePrefix is the region's prefix of usage types (USE1-EKS-EC2-vCPU-Hours).
// The rules match usage types by suffix, so an unknown region goes without.
func usagePrefix(region string) string {
	p := map[string]string{"us-east-1": "USE1-", "us-east-2": "USE2-", "us-west-1": "USW1-", "us-west-2": "USW2-",
		"eu-west-1": "EUW1-", "eu-central-1": "EUC1-", "ap-southeast-1": "APS1-", "ap-northeast-1": "APN1-"}[region]
	return p
}

// ec2UsagePrefix is the prefix of EC2's own usage types (BoxUsage:m5.large,
// EBS:VolumeUsage.gp3), which us-east-1 goes without.
func ec2UsagePrefix(region string) string {
	if region == "us-east-1" {
		return ""
	}
	return usagePrefix(region)
}

// curPod is one pod's hour on its node: vCPU-, GiB- and GPU-hours
// requested and used.
type curPod struct {
	m        member
	req, use [3]float64
}

// curSink turns one hour's pod allocations into the pods' split lines and
// adds the instances', the volumes' and the Savings Plan's own lines.
type curSink struct {
	c                                        *cluster
	fn                                       func(*curfixture.Row) error
	podPrefix, account, cluster, usagePrefix string
	region                                   string // product_region_code of the instance and volume lines
	mix                                      []CURNode
	volumes                                  []curVolume
	nodeTags                                 map[string]string
	spARN                                    string
	hour                                     int64
	null                                     bool
	pods                                     [][]curPod // per node
	row                                      curfixture.Row
	name                                     []byte
	allocs, ratio, split, unused             [][3]float64
}

func newCURSink(c *cluster, fn func(*curfixture.Row) error, arn []string, name string) *curSink {
	region, account := arn[3], arn[4]
	k := &curSink{c: c, fn: fn, podPrefix: strings.Join(arn[:5], ":") + ":pod/" + name + "/", account: account, region: region,
		cluster: name, usagePrefix: usagePrefix(region), mix: c.curMix(region), pods: make([][]curPod, len(c.nodes)),
		nodeTags: map[string]string{"user_eks_cluster_name": name, "user_kubernetes_io_cluster_" + name: "owned"},
		spARN:    "arn:aws:savingsplans::" + account + ":savingsplan/00000000-0000-0000-0000-000000000001"}
	k.volumes = c.curVolumes(region, name)
	return k
}

func (k *curSink) beginSet(w setWindow) error {
	k.hour, k.null = w.start, w.null
	for n := range k.pods {
		k.pods[n] = k.pods[n][:0]
	}
	return nil
}

func (k *curSink) alloc(_ []byte, m *member, a *acc) error {
	if m.sl == nil {
		return nil
	}
	const gib = 1 << 30
	k.pods[m.node] = append(k.pods[m.node], curPod{m: *m,
		req: [3]float64{a.cpuReqCoreMin / 60, a.ramReqByteMin / 60 / gib, a.gpuHours},
		use: [3]float64{a.cpuUseCoreMin / 60, a.ramUseByteMin / 60 / gib, a.gpuHours}})
	return nil
}

// endSet writes the hour: per node its instance lines then its pods'
// lines, the plan's fee, then the volumes. Sets outside the simulator's
// data have no bill either.
func (k *curSink) endSet() error {
	if k.null {
		return nil
	}
	start := time.Unix(k.hour*3600, 0).UTC()
	commitment := 0.0
	for n := range k.mix {
		if err := k.instanceLines(&k.mix[n], start); err != nil {
			return err
		}
		if k.mix[n].Purchase == PurchaseSavingsPlan {
			commitment += k.mix[n].HourlyAmortized
		}
		if err := k.podLines(n, start); err != nil {
			return err
		}
	}
	if commitment > 0 {
		if err := k.feeLine(start, commitment); err != nil {
			return err
		}
	}
	for i := range k.volumes {
		if err := k.volumeLine(&k.volumes[i], start); err != nil {
			return err
		}
	}
	return nil
}

// podLines writes the SCAD lines of node n's pods in the hour.
func (k *curSink) podLines(n int, start time.Time) error {
	pods := k.pods[n]
	if len(pods) == 0 {
		return nil
	}
	mx := &k.mix[n]
	grow := func(s [][3]float64) [][3]float64 { return append(s[:0], make([][3]float64, len(pods))...) }
	k.allocs, k.ratio, k.split, k.unused = grow(k.allocs), grow(k.ratio), grow(k.split), grow(k.unused)
	for p := range pods {
		for r := range 3 {
			k.allocs[p][r] = max(pods[p].req[r], pods[p].use[r])
		}
	}
	scadShares([3]float64{mx.VCPU, mx.MemoryGiB, mx.GPU}, k.allocs, k.ratio, k.split, k.unused)
	for p := range pods {
		for r := range 3 {
			if k.allocs[p][r] <= 0 {
				continue
			}
			if err := k.podLine(&pods[p], mx, r, p, start); err != nil {
				return err
			}
		}
	}
	return nil
}

var curUsageTypes = [3]string{"EKS-EC2-vCPU-Hours", "EKS-EC2-GB-Hours", "EKS-EC2-Accelerator-Hours"}

func (k *curSink) podLine(pd *curPod, mx *CURNode, r, p int, start time.Time) error {
	sl := pd.m.sl
	k.name = append(k.name[:0], k.podPrefix...)
	k.name = append(append(k.name, sl.ctrl.ns.name...), '/')
	k.name = k.c.appendPod(k.name, sl, pd.m.gen, pd.m.node)
	pod := string(k.name[len(k.podPrefix)+len(sl.ctrl.ns.name)+1:])
	k.name = append(k.name, '/')
	k.name = append(k.name, podUID(sl, pd.m.gen)...)
	c, list := mx.HourlyAmortized, mx.HourlyOnDemand
	split, unused := k.split[p][r], k.unused[p][r]
	k.row = curfixture.Row{
		AccountID: k.account, LineItemType: "Usage", Operation: "EKSPod-EC2", ProductCode: "AmazonEC2",
		UsageType: k.usagePrefix + curUsageTypes[r], ResourceID: string(k.name), ParentResourceID: mx.InstanceID,
		Start: start, End: start.Add(time.Hour), UsageAmount: k.allocs[p][r],
		SplitCost: curfixture.F(c * split), UnusedCost: curfixture.F(c * unused),
		PODSplit: curfixture.F(list * split), PODUnused: curfixture.F(list * unused),
		SplitUsageRatio: curfixture.F(k.ratio[p][r]),
		Tags: map[string]string{"aws_eks_cluster_name": k.cluster,
			"aws_eks_namespace": sl.ctrl.ns.name, "aws_eks_workload_name": sl.ctrl.name, "aws_eks_node": mx.Node, "aws_eks_pod": pod},
		Extra: &curfixture.Extra{SplitUsage: curfixture.F(k.allocs[p][r]), ReservedUsage: curfixture.F(pd.req[r]),
			ActualUsage: curfixture.F(pd.use[r])},
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
