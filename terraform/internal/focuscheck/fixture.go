package focuscheck

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// SplitRow is one row of the split's view <prefix>_split_daily, with
// exactly the columns the split and FOCUS branches agreed on.
type SplitRow struct {
	AccountID, Region, ClusterARN, Cluster string
	UsageDate                              time.Time
	ResourceKind                           string // instance, volume, data_transfer, load_balancer
	ResourceID                             string // "" = null (Kubecost only)
	Node, Namespace, ControllerKind        string
	Controller, Pod                        string
	IsIdle                                 bool
	Share                                  *float64 // nil = null
	KubecostCost                           float64
	PublicOnDemandCost, AmortizedCost      *float64
	NetCost                                *float64
	PriceBasis, PresentIn                  string
}

// SplitDailyDDL creates the split's view as a table with its agreed
// columns and types, for the tests until the split's own view exists.
const SplitDailyDDL = `CREATE TABLE %s (
  account_id VARCHAR, region VARCHAR, cluster_arn VARCHAR, cluster VARCHAR, usage_date DATE,
  resource_kind VARCHAR, resource_id VARCHAR, node VARCHAR, namespace VARCHAR, controller_kind VARCHAR,
  controller VARCHAR, pod VARCHAR, is_idle BOOLEAN, share DOUBLE, kubecost_cost DOUBLE,
  public_on_demand_cost DOUBLE, amortized_cost DOUBLE, net_cost DOUBLE, price_basis VARCHAR, present_in VARCHAR)`

// CreateSplitDaily creates table (a quoted name) and inserts rows.
func CreateSplitDaily(db *sql.DB, table string, rows []SplitRow) error {
	if _, err := db.Exec(fmt.Sprintf(SplitDailyDDL, table)); err != nil {
		return fmt.Errorf("focuscheck: create %s: %w", table, err)
	}
	q := fmt.Sprintf("INSERT INTO %s VALUES (%s)", table, strings.TrimSuffix(strings.Repeat("?, ", 20), ", "))
	for _, r := range rows {
		var res any
		if r.ResourceID != "" {
			res = r.ResourceID
		}
		if _, err := db.Exec(q, r.AccountID, r.Region, r.ClusterARN, r.Cluster, r.UsageDate.Format("2006-01-02"),
			r.ResourceKind, res, r.Node, r.Namespace, r.ControllerKind, r.Controller, r.Pod, r.IsIdle,
			r.Share, r.KubecostCost, r.PublicOnDemandCost, r.AmortizedCost, r.NetCost, r.PriceBasis, r.PresentIn); err != nil {
			return fmt.Errorf("focuscheck: insert into %s: %w", table, err)
		}
	}
	return nil
}

// The canonical scenario: one day of cluster prod in account
// 111122223333, and the organisation's FOCUS export of that day.
var (
	Day        = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	account    = "111122223333"
	clusterARN = "arn:aws:eks:eu-west-1:" + account + ":cluster/prod"
)

func pod(resource, kind, node, ns, ck, ctrl, p string, share, cost float64) SplitRow {
	return SplitRow{AccountID: account, Region: "eu-west-1", ClusterARN: clusterARN, Cluster: "prod", UsageDate: Day,
		ResourceKind: kind, ResourceID: resource, Node: node, Namespace: ns, ControllerKind: ck, Controller: ctrl, Pod: p,
		Share: curfixture.F(share), KubecostCost: cost, PriceBasis: "bill", PresentIn: "both"}
}

func idle(resource, node string, share float64, presentIn string) SplitRow {
	r := pod(resource, "instance", node, schema.IdleName, "", "", schema.IdleName, share, 0)
	r.IsIdle, r.PresentIn = true, presentIn
	return r
}

// CanonicalSplit is the split of that day: an on-demand node shared by
// two pods of one Deployment, a StatefulSet pod, a bare pod and its idle;
// a Savings Plan node with one workload and its idle; a volume of the
// StatefulSet's claim; the first node's data transfer, split by its own
// shares; an instance only the bill has (one unallocated
// row); and a Fargate pod only Kubecost has (no bill resource).
func CanonicalSplit() []SplitRow {
	fargate := pod("", "instance", "fargate-ip-9", "batch", "job", "nightly", "nightly-x1", 0, 0.4)
	fargate.Share, fargate.PresentIn, fargate.PriceBasis = nil, "kubecost_only", "list"
	return []SplitRow{
		pod("i-0aaa", "instance", "ip-a", "payments", "deployment", "api", "api-7d9-1", 0.3, 1.1),
		pod("i-0aaa", "instance", "ip-a", "payments", "deployment", "api", "api-7d9-2", 0.2, 0.7),
		pod("i-0aaa", "instance", "ip-a", "search", "statefulset", "idx", "idx-0", 0.25, 0.9),
		pod("i-0aaa", "instance", "ip-a", "kube-system", "", "", "debug", 0.05, 0.2),
		idle("i-0aaa", "ip-a", 0.2, "both"),
		pod("i-0bbb", "instance", "ip-b", "identity", "deployment", "auth", "auth-1", 0.6, 2.0),
		idle("i-0bbb", "ip-b", 0.4, "both"),
		pod("i-0aaa", "data_transfer", "ip-a", "payments", "deployment", "api", "api-7d9-1", 0.7, 0.02),
		pod("i-0aaa", "data_transfer", "ip-a", "search", "statefulset", "idx", "idx-0", 0.3, 0.01),
		pod("vol-0ccc", "volume", "ip-a", "search", "statefulset", "idx", "idx-0", 1, 0.1),
		idle("i-0ddd", "", 1, "bill_only"),
		// Shares that do not add up to 1: the views leave i-0fff's charges
		// as the export has them.
		pod("i-0fff", "instance", "ip-f", "payments", "deployment", "worker", "worker-1", 0.5, 0.3),
		pod("i-0fff", "instance", "ip-f", "search", "deployment", "crawler", "crawler-1", 0.4, 0.2),
		fargate,
	}
}

// CanonicalFocus is the organisation's FOCUS export of that day: three
// hours of each cluster instance (one on demand with its data transfer,
// one under a Savings Plan), the volume, the instance only the bill has, and lines that are
// not the cluster's (another account's instance, S3, a tax and a credit),
// a credit on a cluster instance, and an instance whose split is broken.
func CanonicalFocus() []curfixture.FocusRow {
	var rows []curfixture.FocusRow
	for h := 0; h < 3; h++ {
		at := Day.Add(time.Duration(h) * time.Hour)
		rows = append(rows, curfixture.FocusLine(account, "i-0aaa", "Amazon Elastic Compute Cloud", "m6i.xlarge", at, 0.192, 0.192, 0.192))
		dt := curfixture.FocusLine(account, "i-0aaa", "Amazon Elastic Compute Cloud", "DataTransfer-Out", at, 0.09, 0.09, 0.09)
		dt.PricingUnit, dt.ConsumedUnit, dt.ServiceCategory = curfixture.S("GB"), curfixture.S("GB"), curfixture.S("Networking")
		rows = append(rows, dt)
		sp := curfixture.FocusLine(account, "i-0bbb", "Amazon Elastic Compute Cloud", "m6i.2xlarge", at, 0.384, 0, 0.25)
		sp.CommitmentDiscountId = curfixture.S("arn:aws:savingsplans::999988887777:savingsplan/sp-1")
		sp.CommitmentDiscountStatus, sp.CommitmentDiscountType = curfixture.S("Used"), curfixture.S("Compute Savings Plan")
		sp.CommitmentDiscountCategory, sp.PricingCategory = curfixture.S("Spend"), curfixture.S("Committed")
		rows = append(rows, sp)
		vol := curfixture.FocusLine(account, "vol-0ccc", "Amazon Elastic Compute Cloud", "gp3", at, 0.011, 0.011, 0.011)
		vol.PricingUnit, vol.ConsumedUnit, vol.XOperation = curfixture.S("GB-Mo"), curfixture.S("GB-Mo"), curfixture.S("CreateVolume-Gp3")
		rows = append(rows, vol)
		rows = append(rows, curfixture.FocusLine(account, "i-0ddd", "Amazon Elastic Compute Cloud", "t3.large", at, 0.0832, 0.0832, 0.0832))
		rows = append(rows, curfixture.FocusLine("444455556666", "i-0eee", "Amazon Elastic Compute Cloud", "c6i.large", at, 0.085, 0.085, 0.085))
		rows = append(rows, curfixture.FocusLine(account, "i-0fff", "Amazon Elastic Compute Cloud", "m6i.large", at, 0.096, 0.096, 0.096))
	}
	// A credit against a cluster instance is not an origin charge: only
	// usage lines are split.
	icredit := curfixture.FocusLine(account, "i-0aaa", "Amazon Elastic Compute Cloud", "Credit", Day, -0.05, -0.05, -0.05)
	icredit.ChargeCategory, icredit.ListUnitPrice, icredit.ContractedUnitPrice = curfixture.S("Credit"), nil, nil
	rows = append(rows, icredit)
	s3 := curfixture.FocusLine(account, "arn:aws:s3:::logs-bucket", "Amazon Simple Storage Service", "S3-Storage", Day, 2.3, 2.3, 2.3)
	tax := curfixture.FocusLine(account, "", "Amazon Elastic Compute Cloud", "Tax", Day, 0.5, 0.5, 0.5)
	tax.ResourceId, tax.ChargeCategory, tax.ListUnitPrice, tax.PricingQuantity = nil, curfixture.S("Tax"), nil, nil
	tax.ContractedUnitPrice = nil
	credit := curfixture.FocusLine(account, "", "Amazon Elastic Compute Cloud", "Credit", Day, -1, -1, -1)
	credit.ResourceId, credit.ChargeCategory, credit.ListUnitPrice, credit.PricingQuantity = nil, curfixture.S("Credit"), nil, nil
	credit.ContractedUnitPrice = nil
	return append(rows, s3, tax, credit)
}
