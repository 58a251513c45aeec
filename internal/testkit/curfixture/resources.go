package curfixture

import "time"

// spNegation is the SavingsPlanNegation line AWS writes next to a Savings
// Plan covered hour: the covered line's on-demand cost, negated
// (https://docs.aws.amazon.com/cur/latest/userguide/cur-sp.html). The
// amortized rule gives it 0; counting it would cancel the hour.
func spNegation(account, instance string, start time.Time, onDemand float64) Row {
	return Row{
		AccountID: account, LineItemType: "SavingsPlanNegation", Operation: "RunInstances", ProductCode: "AmazonEC2",
		UsageType: "USE1-BoxUsage:g5.xlarge", ResourceID: instance, SavingsPlanARN: spARN, Start: start, End: start.Add(time.Hour),
		UsageAmount: 1, Unblended: F(-onDemand), NetUnblended: F(-onDemand * 0.95), PublicOnDemand: F(onDemand), RegionCode: Region,
	}
}

// resourceLines are the resource-level lines of the canonical export
// beyond the instance lines next to the pod lines:
//   - a Spot instance in A (two hours of Day1), which the archive's
//     monitoring node runs on;
//   - InstLost's hour on Day2: SCAD's experiments pod ran on it, the
//     archive has no node of it (bill only);
//   - an instance of AccountC, whose bill has no pod lines (SCAD off);
//   - a second hour of the gp3 volume, with a net cost;
//   - a load balancer's hour (not matched to a service: Kubecost's load
//     balancer cost stays list-priced);
//   - fee lines the amortized rule treats apart: RIFee (unused
//     reservation fees), SavingsPlanRecurringFee (commitment unused),
//     SavingsPlanUpfrontFee, a reservation's Fee and a refund of a
//     Savings Plan's one-time fee, none of them a resource's line.
func resourceLines() []Row {
	t := hour(Day1, 10)
	spot := func(start time.Time) Row {
		return Row{AccountID: AccountA, LineItemType: "Usage", Operation: "RunInstances:SV001", ProductCode: "AmazonEC2",
			UsageType: "USE1-SpotUsage:m5.xlarge", ResourceID: InstSpot, Start: start, End: start.Add(time.Hour), UsageAmount: 1,
			Unblended: F(0.07), NetUnblended: F(0.063), PublicOnDemand: F(0.192), RegionCode: Region}
	}
	period := time.Date(Day1.Year(), Day1.Month(), 1, 0, 0, 0, 0, time.UTC)
	fee := func(typ, product, id string) Row {
		return Row{AccountID: AccountA, LineItemType: typ, ProductCode: product, ResourceID: id, Start: period,
			End: period.AddDate(0, 1, 0), Unblended: F(50), NetUnblended: F(45), RegionCode: Region}
	}
	riFee := fee("RIFee", "AmazonEC2", riARN)
	riFee.ReservationARN = riARN
	riFee.RIUnusedUpfront, riFee.RIUnusedRecurring, riFee.RINetUnusedUpfront, riFee.RINetUnusedRecurring = F(1.5), F(2.5), F(1.2), F(2.0)
	spFee := fee("SavingsPlanRecurringFee", "ComputeSavingsPlans", spARN)
	spFee.SavingsPlanARN, spFee.SPTotalCommitment, spFee.SPUsedCommitment = spARN, F(100), F(96.5)
	upfront := fee("SavingsPlanUpfrontFee", "ComputeSavingsPlans", spARN)
	riUpfront := fee("Fee", "AmazonEC2", riARN)
	riUpfront.ReservationARN = riARN
	refund := fee("Refund", "ComputeSavingsPlans", spARN)
	refund.Unblended, refund.Description = F(-20), "Refund for one-time fee for Savings Plan ID aaaaaaaa"
	lost := hour(Day2, 3)
	vol := hour(Day1, 13)
	return []Row{
		spot(t), spot(t.Add(time.Hour)),
		{AccountID: AccountC, LineItemType: "Usage", Operation: "RunInstances", ProductCode: "AmazonEC2",
			UsageType: "USE1-BoxUsage:m5.xlarge", ResourceID: InstNoSCAD, Start: t, End: t.Add(time.Hour), UsageAmount: 1,
			Unblended: F(0.192), NetUnblended: F(0.18), PublicOnDemand: F(0.192), RegionCode: Region},
		{AccountID: AccountA, LineItemType: "Usage", Operation: "RunInstances", ProductCode: "AmazonEC2",
			UsageType: "USE1-BoxUsage:m5.large", ResourceID: InstLost, Start: lost, End: lost.Add(time.Hour), UsageAmount: 1,
			Unblended: F(0.0185), NetUnblended: F(0.0147), PublicOnDemand: F(0.025), RegionCode: Region},
		{AccountID: AccountA, LineItemType: "Usage", Operation: "CreateVolume-Gp3", ProductCode: "AmazonEC2",
			UsageType: "USE1-EBS:VolumeUsage.gp3", ResourceID: Volume, Start: vol, End: vol.Add(time.Hour),
			UsageAmount: 0.1, Unblended: F(0.011), NetUnblended: F(0.0099), PublicOnDemand: F(0.011), RegionCode: Region},
		// A volume of the cluster, by its tags, that no PV of the archive
		// names: bill-only (the tag's other keys are not a cluster's).
		{AccountID: AccountA, LineItemType: "Usage", Operation: "CreateVolume-Gp3", ProductCode: "AmazonEC2",
			UsageType: "USE1-EBS:VolumeUsage.gp3", ResourceID: VolumeLost, Start: vol, End: vol.Add(time.Hour),
			UsageAmount: 0.2, Unblended: F(0.022), NetUnblended: F(0.0198), PublicOnDemand: F(0.022), RegionCode: Region,
			Tags: map[string]string{"user_kubernetes_io_cluster_" + ClusterName: "owned", "user_kubernetes_io_cluster_": "owned",
				"user_kubernetes_io_created_for_pv_name": "pvc-lost"}},
		{AccountID: AccountA, LineItemType: "Usage", Operation: "LoadBalancing:Network", ProductCode: "AWSELB",
			UsageType: "USE1-LoadBalancerUsage", ResourceID: LoadBal, Start: t, End: t.Add(time.Hour),
			UsageAmount: 1, Unblended: F(0.0225), PublicOnDemand: F(0.0225), RegionCode: Region},
		riFee, spFee, upfront, riUpfront, refund,
	}
}
