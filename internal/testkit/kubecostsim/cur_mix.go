package kubecostsim

import (
	"strconv"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// Purchase is how the simulated bill pays for a node's instance (cur.go).
type Purchase string

const (
	PurchaseSavingsPlan Purchase = "savings-plan" // Compute Savings Plan, SavingsPlanRate of on demand
	PurchaseOnDemand    Purchase = "on-demand"
	PurchaseSpot        Purchase = "spot" // SpotRate of on demand
)

// The simulated bill's prices as a share of the public on-demand price,
// which is the simulator's list price (cur.go).
const (
	SavingsPlanRate = 0.72 // 28% off
	SpotRate        = 0.30 // 70% off
	// GP3PerGBMonth and HoursPerMonth price a gp3 volume: $0.08 per
	// GB-month (us-east-1's public price, the one Kubecost's default
	// pricing uses), and a month of 730 hours as Kubecost counts one.
	GP3PerGBMonth = 0.08
	HoursPerMonth = 730
)

// Rate is p's price as a share of the public on-demand price.
func (p Purchase) Rate() float64 {
	switch p {
	case PurchaseSavingsPlan:
		return SavingsPlanRate
	case PurchaseSpot:
		return SpotRate
	}
	return 1
}

// CURNode is a node's instance in the simulated bill.
type CURNode struct {
	Node, InstanceID, InstanceType string
	Purchase                       Purchase
	VCPU, MemoryGiB, GPU           float64
	// HourlyOnDemand is the public on-demand cost of an hour (the
	// simulator's list price of the node); HourlyAmortized is
	// Purchase.Rate() of it.
	HourlyOnDemand, HourlyAmortized float64
	product                         map[string]string
	usageType, operation            string
}

// CURVolume is a persistent volume's EBS volume in the simulated bill.
type CURVolume struct {
	VolumeID, PV, Namespace string
	GiB                     float64
	HourlyCost              float64 // GiB × GP3PerGBMonth / HoursPerMonth
}

type curVolume struct {
	CURVolume
	tags, product map[string]string
	usageType     string
}

// CURMix is what each node's instance is and costs in the simulated bill,
// in node order.
func (s *Sim) CURMix() []CURNode { return s.c.curMix(s.cfg.Region) }

// CURVolumes are the volumes of the simulated bill, in slot order.
func (s *Sim) CURVolumes() []CURVolume {
	var out []CURVolume
	for _, v := range s.c.curVolumes(s.cfg.Region, s.cfg.ClusterName) {
		out = append(out, v.CURVolume)
	}
	return out
}

func (c *cluster) curMix(region string) []CURNode {
	prefix := ec2UsagePrefix(region)
	out := make([]CURNode, len(c.nodes))
	onDemand := 0
	for i := range c.nodes {
		nd := &c.nodes[i]
		p := PurchaseSpot
		if !nd.spot {
			p = PurchaseSavingsPlan
			if onDemand%2 == 1 {
				p = PurchaseOnDemand
			}
			onDemand++
		}
		list := nd.cpu*nd.cpuPrice + nd.ramBytes*nd.ramPrice + nd.gpu*nd.gpuPrice
		m := CURNode{Node: nd.name, InstanceID: instanceID(nd), InstanceType: nd.instanceType, Purchase: p,
			VCPU: nd.cpu, MemoryGiB: nd.ramBytes / (1 << 30), GPU: nd.gpu, HourlyOnDemand: list, HourlyAmortized: list * p.Rate(),
			usageType: prefix + "BoxUsage:" + nd.instanceType, operation: "RunInstances"}
		if p == PurchaseSpot {
			m.usageType, m.operation = prefix+"SpotUsage:"+nd.instanceType, "RunInstances:SV001"
		}
		m.product = map[string]string{"instance_type": nd.instanceType, "vcpu": strconv.FormatFloat(nd.cpu, 'f', -1, 64),
			"memory": strconv.FormatFloat(m.MemoryGiB, 'f', -1, 64) + " GiB"}
		if nd.gpu > 0 {
			m.product["gpu"] = strconv.FormatFloat(nd.gpu, 'f', -1, 64)
		}
		out[i] = m
	}
	return out
}

func (c *cluster) curVolumes(region, cluster string) []curVolume {
	var out []curVolume
	for i := range c.slots {
		sl := &c.slots[i]
		if sl.pvID == "" {
			continue
		}
		pv := sl.pvKey[len("cluster=")+len(c.name)+len(":name="):]
		gib := sl.ctrl.pvBytes / (1 << 30)
		out = append(out, curVolume{
			CURVolume: CURVolume{VolumeID: sl.pvID, PV: pv, Namespace: sl.ctrl.ns.name, GiB: gib, HourlyCost: gib * GP3PerGBMonth / HoursPerMonth},
			tags: map[string]string{"user_kubernetes_io_cluster_" + cluster: "owned",
				"user_kubernetes_io_created_for_pv_name": pv, "user_kubernetes_io_created_for_pvc_namespace": sl.ctrl.ns.name},
			product:   map[string]string{"volume_api_name": "gp3"},
			usageType: ec2UsagePrefix(region) + "EBS:VolumeUsage.gp3",
		})
	}
	return out
}

// instanceLines writes the node's own lines for the hour: its usage, and
// under the Savings Plan the negation of the covered usage's cost.
func (k *curSink) instanceLines(mx *CURNode, start time.Time) error {
	k.row = curfixture.Row{
		AccountID: k.account, LineItemType: "Usage", Operation: mx.operation, ProductCode: "AmazonEC2",
		UsageType: mx.usageType, ResourceID: mx.InstanceID, RegionCode: k.region, Start: start, End: start.Add(time.Hour), UsageAmount: 1,
		Unblended: curfixture.F(mx.HourlyAmortized), PublicOnDemand: curfixture.F(mx.HourlyOnDemand),
		Tags: k.nodeTags, Product: mx.product, Extra: &curfixture.Extra{PricingTerm: "OnDemand"},
	}
	switch mx.Purchase {
	case PurchaseSpot:
		k.row.Extra.PricingTerm = "Spot"
	case PurchaseSavingsPlan:
		k.row.LineItemType, k.row.SavingsPlanARN = "SavingsPlanCoveredUsage", k.spARN
		k.row.Unblended = curfixture.F(mx.HourlyOnDemand)
		k.row.SPEffective = curfixture.F(mx.HourlyAmortized)
		k.row.Extra.SPRate = curfixture.F(mx.HourlyAmortized)
		if err := k.fn(&k.row); err != nil {
			return err
		}
		// The negation takes the covered usage's on-demand cost back out
		// of the unblended cost; the simulator leaves its public
		// on-demand cost null so that summing that column counts the
		// instance once.
		k.row.LineItemType, k.row.UsageAmount = "SavingsPlanNegation", 0
		k.row.Unblended, k.row.PublicOnDemand, k.row.SPEffective = curfixture.F(-mx.HourlyOnDemand), nil, nil
		k.row.Extra = &curfixture.Extra{}
	}
	return k.fn(&k.row)
}

// feeLine is the Savings Plan's hourly fee: a commitment that the covered
// instances use whole.
func (k *curSink) feeLine(start time.Time, commitment float64) error {
	k.row = curfixture.Row{
		AccountID: k.account, LineItemType: "SavingsPlanRecurringFee", ProductCode: "ComputeSavingsPlans",
		UsageType: "ComputeSP:1yrNoUpfront", ResourceID: k.spARN, SavingsPlanARN: k.spARN,
		Start: start, End: start.Add(time.Hour), UsageAmount: 1, Unblended: curfixture.F(commitment),
		SPTotalCommitment: curfixture.F(commitment), SPUsedCommitment: curfixture.F(commitment),
	}
	return k.fn(&k.row)
}

func (k *curSink) volumeLine(v *curVolume, start time.Time) error {
	k.row = curfixture.Row{
		AccountID: k.account, LineItemType: "Usage", Operation: "CreateVolume-Gp3", ProductCode: "AmazonEC2",
		UsageType: v.usageType, ResourceID: v.VolumeID, RegionCode: k.region, Start: start, End: start.Add(time.Hour),
		UsageAmount: v.GiB / HoursPerMonth, Unblended: curfixture.F(v.HourlyCost), PublicOnDemand: curfixture.F(v.HourlyCost),
		Tags: v.tags, Product: v.product, Extra: &curfixture.Extra{PricingTerm: "OnDemand"},
	}
	return k.fn(&k.row)
}

// scadWeights are split cost allocation data's relative weights of a
// vCPU, a GB of memory and a GPU: 9:1 for vCPU and memory
// (example-split-cost-allocation-data.html); on an accelerated instance
// GPU 9 against vCPU and memory together 1, split 0.9 and 0.1
// (example-accelerated-instances.html).
func scadWeights(gpus float64) [3]float64 {
	if gpus > 0 {
		return [3]float64{0.9, 0.1, 9}
	}
	return [3]float64{9, 1, 0}
}

// scadShares splits one instance-hour among its pods as SCAD does (cur.go),
// in shares of the instance's cost. capacity is the instance's vCPUs, GiB
// and GPUs; alloc[p] pod p's allocated vCPU-, GiB- and GPU-hours. It fills
// ratio (split_line_item_split_usage_ratio), split and unused, which add
// up to 1 over the pods when any pod has an allocation.
func scadShares(capacity [3]float64, alloc, ratio, split, unused [][3]float64) {
	w := scadWeights(capacity[2])
	var units, total, splitSum [3]float64
	denom := 0.0
	for r := range 3 {
		units[r] = w[r] * capacity[r]
		denom += units[r]
	}
	for p := range alloc {
		for r := range 3 {
			total[r] += alloc[p][r]
		}
	}
	for p := range alloc {
		for r := range 3 {
			ratio[p][r], split[p][r], unused[p][r] = 0, 0, 0
			if alloc[p][r] > 0 {
				ratio[p][r] = alloc[p][r] / max(capacity[r], total[r])
			}
			split[p][r] = ratio[p][r] * units[r] / denom
			splitSum[r] += split[p][r]
		}
	}
	leftover, all := 0.0, 0.0
	for r := range 3 {
		left := units[r]/denom - splitSum[r]
		all += splitSum[r]
		if splitSum[r] == 0 {
			leftover += left
			continue
		}
		for p := range alloc {
			unused[p][r] = left * split[p][r] / splitSum[r]
		}
	}
	if leftover == 0 || all == 0 {
		return
	}
	for p := range alloc {
		for r := range 3 {
			unused[p][r] += leftover * split[p][r] / all
		}
	}
}
