package curfixture

import (
	"fmt"
	"time"
)

// The canonical export's clusters: two EKS clusters named prod in two
// accounts of one region, which must never be mixed.
const (
	Export      = "scad-export"
	Region      = "us-east-1"
	ClusterName = "prod"
	AccountA    = "111122223333"
	AccountB    = "444455556666"
	ClusterA    = "arn:aws:eks:us-east-1:111122223333:cluster/prod"
	ClusterB    = "arn:aws:eks:us-east-1:444455556666:cluster/prod"
)

// The canonical export's namespaces and what the Kubecost side (the
// archive rows a test writes next to it) must hold for the comparison to
// cover every case:
//   - KubecostAndBill are in both (cluster A: payments, ml, batch;
//     cluster B: payments);
//   - BillOnly has bill lines and must have no archive rows (cluster A:
//     experiments);
//   - KubecostOnly has no bill lines and must have archive rows (cluster
//     A: monitoring).
//
// Days: Day1 and Day2 (a pod runs from 22:00 on Day1 to 02:00 on Day2),
// and Day3 in the next billing period.
var (
	KubecostAndBill = map[string][]string{ClusterA: {"payments", "ml", "batch"}, ClusterB: {"payments"}}
	BillOnly        = map[string][]string{ClusterA: {"experiments"}}
	KubecostOnly    = map[string][]string{ClusterA: {"monitoring"}}

	Day1 = time.Date(2026, 1, 14, 0, 0, 0, 0, time.UTC)
	Day2 = time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	Day3 = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
)

// Instances of the canonical export.
const (
	instRI  = "i-0a1a1a1a1a1a1a1a1" // m5.xlarge in A, covered by a Reserved Instance
	instGPU = "i-0c3c3c3c3c3c3c3c3" // g5.xlarge in A, covered by a Savings Plan
	instB   = "i-0b2b2b2b2b2b2b2b2" // m5.xlarge in B, on demand
	// Resource-level cases (resources.go).
	InstSpot   = "i-0d4d4d4d4d4d4d4d4" // m5.xlarge in A, Spot
	InstLost   = "i-0e5e5e5e5e5e5e5e5" // in A: SCAD's pods ran on it, the archive has no node of it
	InstNoBill = "i-0f6f6f6f6f6f6f6f6" // a node of the archive the bill has no line of
	InstNoSCAD = "i-0707070707070707a" // in AccountC, whose bill has no SCAD pod lines
	AccountC   = "777788889999"
	Volume     = "vol-0123456789abcdef0"
	VolumeLost = "vol-0fedcba987654321f" // tagged with the cluster, in no PV
	LoadBal    = "arn:aws:elasticloadbalancing:us-east-1:111122223333:loadbalancer/net/k8s-payments-api/0123456789abcdef"
	riARN      = "arn:aws:ec2:us-east-1:111122223333:reserved-instances/11111111-2222-3333-4444-555555555555"
	spARN      = "arn:aws:savingsplans::111122223333:savingsplan/aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
)

// Instance ids of the canonical export, for the archive side of tests.
const (
	InstRI  = instRI
	InstGPU = instGPU
	InstB   = instB
)

// PodID is a pod's line_item_resource_id.
func PodID(account, cluster, namespace, pod string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:pod/%s/%s/%s/%s-uid", Region, account, cluster, namespace, pod, pod)
}

// EC2 usage types of pod lines by kind (sca-eks).
var ec2Usage = map[string]string{"cpu": "USE1-EKS-EC2-vCPU-Hours", "memory": "USE1-EKS-EC2-GB-Hours", "gpu": "USE1-EKS-EC2-Accelerator-Hours"}

// Cost is the cost columns of an EC2 pod line.
type Cost struct{ Split, Unused, NetSplit, NetUnused, PODSplit, PODUnused *float64 }

// EC2PodLine is one hour of a pod's kind ("cpu", "memory", "gpu") on an
// EC2 instance.
func EC2PodLine(account, namespace, pod, instance, kind string, start time.Time, c Cost) Row {
	return Row{
		AccountID: account, LineItemType: "Usage", Operation: "EKSPod-EC2", ProductCode: "AmazonEC2",
		UsageType: ec2Usage[kind], ResourceID: PodID(account, ClusterName, namespace, pod),
		ParentResourceID: instance, Start: start, End: start.Add(time.Hour), UsageAmount: 1,
		SplitCost: c.Split, UnusedCost: c.Unused, NetSplit: c.NetSplit, NetUnused: c.NetUnused,
		PODSplit: c.PODSplit, PODUnused: c.PODUnused, SplitUsageRatio: F(0.25),
		Tags: map[string]string{"aws_eks_cluster_name": ClusterName, "aws_eks_namespace": namespace, "aws_eks_workload_name": pod},
	}
}

// FargatePodLine is one hour of a Fargate pod's cpu or memory.
func FargatePodLine(account, namespace, pod, kind, lineItemType string, start time.Time, unblended, netUnblended, pod_, spEff, spNet *float64) Row {
	usage := map[string]string{"cpu": "USE1-Fargate-vCPU-Hours:perCPU", "memory": "USE1-Fargate-GB-Hours"}[kind]
	r := Row{
		AccountID: account, LineItemType: lineItemType, Operation: "FargatePod", ProductCode: "AmazonEKS",
		UsageType: usage, ResourceID: PodID(account, ClusterName, namespace, pod),
		Start: start, End: start.Add(time.Hour), UsageAmount: 1,
		Unblended: unblended, NetUnblended: netUnblended, PublicOnDemand: pod_, SPEffective: spEff, SPNetEffective: spNet,
		Tags: map[string]string{"aws_eks_cluster_name": ClusterName, "aws_eks_namespace": namespace},
	}
	if lineItemType == "SavingsPlanCoveredUsage" {
		r.SavingsPlanARN = spARN
	}
	return r
}

// instanceLine is an EC2 instance's own hour (RunInstances): not a pod
// line, to be ignored.
func instanceLine(account, instance, lineItemType string, start time.Time, unblended float64) Row {
	r := Row{
		AccountID: account, LineItemType: lineItemType, Operation: "RunInstances", ProductCode: "AmazonEC2",
		UsageType: "USE1-BoxUsage:m5.xlarge", ResourceID: instance, Start: start, End: start.Add(time.Hour), UsageAmount: 1,
		Unblended: F(unblended), PublicOnDemand: F(0.192), RegionCode: Region,
		Product: map[string]string{"instance_type": "m5.xlarge", "vcpu": "4", "memory": "16 GiB"},
	}
	switch lineItemType {
	case "DiscountedUsage":
		r.ReservationARN, r.RIEffective, r.RINetEffective = riARN, F(0.12), F(0.10)
	case "SavingsPlanCoveredUsage":
		// The GPU node's hour: split + unused of its pod lines is 0.98
		// (0.686 net), which the Savings Plan's effective cost is, so
		// that SCAD's split and the instance's own lines agree there.
		r.UsageType, r.PublicOnDemand = "USE1-BoxUsage:g5.xlarge", F(1.006)
		r.SavingsPlanARN, r.SPEffective, r.SPNetEffective, r.NetUnblended = spARN, F(0.98), F(0.686), F(0.95)
	case "Usage":
		r.PublicOnDemand = F(unblended) // B has no discounts: no net columns
	}
	return r
}

func hour(day time.Time, h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }

// Canonical returns the canonical export's lines (see the package doc and
// the comments of each group for the case each covers).
func Canonical() []Row {
	var rows []Row
	add := func(r ...Row) { rows = append(rows, r...) }

	// payments/api in A runs 22:00 Day1 to 02:00 Day2 on an RI-covered
	// instance: net split and net unused below split and unused; its lines
	// fall on both days.
	for i, start := range []time.Time{hour(Day1, 22), hour(Day1, 23), hour(Day2, 0), hour(Day2, 1)} {
		f := 1 + float64(i)/10
		add(EC2PodLine(AccountA, "payments", "api", instRI, "cpu", start,
			Cost{F(0.020 * f), F(0.005 * f), F(0.015 * f), F(0.004 * f), F(0.030 * f), F(0.008 * f)}),
			EC2PodLine(AccountA, "payments", "api", instRI, "memory", start,
				Cost{F(0.010 * f), F(0.002 * f), F(0.0075 * f), F(0.0015 * f), F(0.015 * f), F(0.003 * f)}),
			instanceLine(AccountA, instRI, "DiscountedUsage", start, 0))
	}
	// Null versus 0 on payments/worker in A, Day2 10:00: a null net split
	// and a 0 net split both fall back to the split cost; a null net
	// unused falls back to the unused cost.
	w := hour(Day2, 10)
	add(EC2PodLine(AccountA, "payments", "worker", instRI, "cpu", w, Cost{F(0.040), F(0.010), nil, nil, F(0.060), F(0.012)}),
		EC2PodLine(AccountA, "payments", "worker", instRI, "memory", w, Cost{F(0.020), F(0.004), F(0), F(0), F(0.030), F(0.005)}))
	// Dropped as the view drops them: no parent instance and a split cost
	// of 0 (empty parent, null parent) or null; kept: a null split cost
	// with a parent (it counts as a line and adds its unused cost only).
	ghost := EC2PodLine(AccountA, "payments", "ghost", "", "cpu", w, Cost{F(0), F(0.5), F(0), F(0.5), F(0), F(0.5)})
	ghostNull := ghost
	ghostNull.NullStrings = []string{"split_line_item_parent_resource_id"}
	ghostNullSplit := EC2PodLine(AccountA, "payments", "ghost", "", "memory", w, Cost{nil, F(0.5), nil, F(0.5), nil, F(0.5)})
	keptNull := EC2PodLine(AccountA, "payments", "worker", instRI, "cpu", hour(Day2, 11), Cost{nil, F(0.001), nil, nil, nil, F(0.002)})
	add(ghost, ghostNull, ghostNullSplit, keptNull)

	// ml/trainer in A on a GPU instance covered by a Savings Plan: cpu,
	// memory and gpu lines, net split below split.
	for _, start := range []time.Time{hour(Day1, 10), hour(Day1, 11)} {
		add(EC2PodLine(AccountA, "ml", "trainer", instGPU, "cpu", start, Cost{F(0.10), F(0.02), F(0.07), F(0.014), F(0.125), F(0.025)}),
			EC2PodLine(AccountA, "ml", "trainer", instGPU, "memory", start, Cost{F(0.05), F(0.01), F(0.035), F(0.007), F(0.0625), F(0.0125)}),
			EC2PodLine(AccountA, "ml", "trainer", instGPU, "gpu", start, Cost{F(0.80), F(0), F(0.56), F(0), F(1.00), F(0)}),
			instanceLine(AccountA, instGPU, "SavingsPlanCoveredUsage", start, 1.006),
			spNegation(AccountA, instGPU, start, 1.006))
	}

	// batch in A on Fargate. job-1, on demand: a null net unblended cost
	// falls back to the unblended cost, a positive one is used. job-2,
	// Savings Plan covered: the net SP effective cost when the net
	// unblended cost is positive, else the SP effective cost.
	add(FargatePodLine(AccountA, "batch", "job-1", "cpu", "Usage", hour(Day1, 5), F(0.04048), nil, F(0.04048), nil, nil),
		FargatePodLine(AccountA, "batch", "job-1", "memory", "Usage", hour(Day1, 5), F(0.00889), F(0.008), F(0.00889), nil, nil),
		FargatePodLine(AccountA, "batch", "job-2", "cpu", "SavingsPlanCoveredUsage", hour(Day2, 6), F(0.04048), F(0.038), F(0.04048), F(0.0324), F(0.030)),
		FargatePodLine(AccountA, "batch", "job-2", "memory", "SavingsPlanCoveredUsage", hour(Day2, 6), F(0.00889), F(0), F(0.00889), F(0.0071), F(0.0069)))
	// A Fargate pod's tax line is not usage: ignored.
	add(FargatePodLine(AccountA, "batch", "job-2", "cpu", "Tax", hour(Day2, 6), F(0.004), nil, nil, nil, nil))

	// experiments in A: a namespace the bill has and Kubecost lacks, on an
	// instance the archive has no node of.
	add(EC2PodLine(AccountA, "experiments", "notebook", InstLost, "cpu", hour(Day2, 3), Cost{F(0.011), F(0.001), F(0.009), F(0.0008), F(0.016), F(0.0015)}),
		EC2PodLine(AccountA, "experiments", "notebook", InstLost, "memory", hour(Day2, 3), Cost{F(0.006), F(0.0005), F(0.0045), F(0.0004), F(0.008), F(0.0007)}))

	// payments/api in B, the other prod: on demand, no net columns.
	for _, start := range []time.Time{hour(Day1, 22), hour(Day1, 23)} {
		add(EC2PodLine(AccountB, "payments", "api", instB, "cpu", start, Cost{F(0.030), F(0.006), nil, nil, F(0.030), F(0.006)}),
			EC2PodLine(AccountB, "payments", "api", instB, "memory", start, Cost{F(0.015), F(0.003), nil, nil, F(0.015), F(0.003)}),
			instanceLine(AccountB, instB, "Usage", start, 0.054))
	}

	// payments/api in A on Day3, the next billing period (another
	// BILLING_PERIOD= folder).
	add(EC2PodLine(AccountA, "payments", "api", instRI, "cpu", Day3, Cost{F(0.021), F(0.004), F(0.016), F(0.003), F(0.030), F(0.006)}),
		EC2PodLine(AccountA, "payments", "api", instRI, "memory", Day3, Cost{F(0.011), F(0.002), F(0.008), F(0.0015), F(0.015), F(0.003)}))

	add(notPods()...)
	add(resourceLines()...)
	return rows
}

// notPods are lines a SCAD export holds that are not EKS pods: all to be
// ignored.
func notPods() []Row {
	t := hour(Day1, 12)
	ecsTask := "arn:aws:ecs:us-east-1:111122223333:task/ecs-prod/0123456789abcdef"
	return []Row{
		// EBS volume.
		{AccountID: AccountA, LineItemType: "Usage", Operation: "CreateVolume-Gp3", ProductCode: "AmazonEC2",
			UsageType: "USE1-EBS:VolumeUsage.gp3", ResourceID: Volume, Start: t, End: t.Add(time.Hour),
			UsageAmount: 0.1, Unblended: F(0.011), PublicOnDemand: F(0.011), RegionCode: Region},
		// Data transfer out of an instance.
		{AccountID: AccountA, LineItemType: "Usage", Operation: "RunInstances", ProductCode: "AWSDataTransfer",
			UsageType: "USE1-DataTransfer-Out-Bytes", ResourceID: instRI, Start: t, End: t.Add(time.Hour),
			UsageAmount: 2, Unblended: F(0.18), PublicOnDemand: F(0.18), RegionCode: Region},
		// An ECS task on EC2 with split cost allocation data.
		{AccountID: AccountA, LineItemType: "Usage", Operation: "ECSTask-EC2", ProductCode: "AmazonECS",
			UsageType: "USE1-ECS-EC2-vCPU-Hours", ResourceID: ecsTask, ParentResourceID: instRI, Start: t, End: t.Add(time.Hour),
			UsageAmount: 1, SplitCost: F(0.05), UnusedCost: F(0.01), NetSplit: F(0.04), PODSplit: F(0.06)},
		// An ECS task on Fargate: Fargate's usage types, not a pod.
		{AccountID: AccountA, LineItemType: "Usage", Operation: "FargateTask", ProductCode: "AmazonECS",
			UsageType: "USE1-Fargate-vCPU-Hours:perCPU", ResourceID: ecsTask, Start: t, End: t.Add(time.Hour),
			UsageAmount: 1, Unblended: F(0.04048), PublicOnDemand: F(0.04048)},
		// The EKS control plane.
		{AccountID: AccountA, LineItemType: "Usage", Operation: "CreateOperation", ProductCode: "AmazonEKS",
			UsageType: "USE1-AmazonEKS-Hours:perCluster", ResourceID: ClusterA, Start: t, End: t.Add(time.Hour),
			UsageAmount: 1, Unblended: F(0.10), PublicOnDemand: F(0.10)},
		// A tax line without a resource.
		{AccountID: AccountA, LineItemType: "Tax", ProductCode: "AmazonEC2", Start: Day1, End: Day1.AddDate(0, 1, 0),
			Unblended: F(1.23)},
	}
}
