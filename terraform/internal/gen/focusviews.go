package gen

import (
	"encoding/json"
	"strings"
)

// The FOCUS views (issue 47) write Kubecost's split of the bill as FOCUS
// 1.3 Cost and Usage rows: the split's rows (the view
// <prefix>_split_daily) applied to the origin charges of the
// organisation's AWS FOCUS 1.2 export, and that export with each matched
// origin charge replaced by its allocated charges. They live in their own
// module, modules/bill-focus, beside the bill module: a FOCUS reader may
// have the FOCUS export and not the CUR 2.0 one.
//
// Rules restated from FOCUS 1.3 (FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec,
// specification/requirements_model/model_rules/attributes/
// datageneratorcalculatedsplitcostallocationhandling.json): allocated
// charges keep every dimension and every unit price of their origin charge
// (A-004-M) and its Tags (A-005-M); their summable metrics add up to the
// origin's (A-003-M); the unallocated part of an origin charge has a null
// AllocatedResourceId (columns/allocatedresourceid.json, C-005-C).

// Paths of the bill-focus module's generated files, relative to the
// terraform directory.
const (
	FocusModuleDir     = "modules/bill-focus"
	FocusViewsJSONPath = FocusModuleDir + "/views.json"
)

// FocusMethodID is the AllocatedMethodId of every allocated charge: the
// method docs/focus.md documents (FOCUS 1.3 requires the method to be
// documented and each document to name one id). Change the version suffix
// whenever the method changes, never the meaning of an existing id.
const FocusMethodID = "kubecost-s3-exporter/kubecost-cost-share/v1"

// FocusTagPrefix prefixes the keys of AllocatedTags: FOCUS 1.3 wants
// data generator-defined tag keys under a prefix of the generator's own
// tag scheme.
const FocusTagPrefix = "kubernetes/"

// focusKind says how an export column is carried into an allocated charge.
type focusKind int

const (
	focusDim   focusKind = iota // dimension: copied from the origin charge
	focusPrice                  // non-summable metric (unit price): copied
	focusSum                    // summable metric: origin value times the share
)

// FocusColumn is one column of AWS's FOCUS 1.2 export, by the FOCUS 1.2
// with AWS columns table dictionary
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-focus-1-2-aws-columns.html):
// string, double, timestamp_milliseconds, and Tags as a map.
type FocusColumn struct {
	Name string // FOCUS column id (Athena lowercases it)
	Type string // string, double, timestamp, map
	Kind focusKind
}

// FocusExportColumns are the export's columns the views carry, in the
// dictionary's order. x_Discounts is left out: a map of amounts that
// Athena and DuckDB cannot scale by a share with the same SQL.
func FocusExportColumns() []FocusColumn {
	s := func(n string) FocusColumn { return FocusColumn{n, "string", focusDim} }
	ts := func(n string) FocusColumn { return FocusColumn{n, "timestamp", focusDim} }
	sum := func(n string) FocusColumn { return FocusColumn{n, "double", focusSum} }
	price := func(n string) FocusColumn { return FocusColumn{n, "double", focusPrice} }
	return []FocusColumn{
		s("AvailabilityZone"), sum("BilledCost"), s("BillingAccountId"), s("BillingAccountName"),
		s("BillingAccountType"), s("BillingCurrency"), ts("BillingPeriodEnd"), ts("BillingPeriodStart"),
		s("CapacityReservationId"), s("CapacityReservationStatus"), s("ChargeCategory"), s("ChargeClass"),
		s("ChargeDescription"), s("ChargeFrequency"), ts("ChargePeriodEnd"), ts("ChargePeriodStart"),
		s("CommitmentDiscountCategory"), s("CommitmentDiscountId"), s("CommitmentDiscountName"),
		sum("CommitmentDiscountQuantity"), s("CommitmentDiscountStatus"), s("CommitmentDiscountType"),
		s("CommitmentDiscountUnit"), sum("ConsumedQuantity"), s("ConsumedUnit"), sum("ContractedCost"),
		price("ContractedUnitPrice"), sum("EffectiveCost"), s("InvoiceIssuerName"), sum("ListCost"),
		price("ListUnitPrice"), s("PricingCategory"), s("PricingCurrency"),
		price("PricingCurrencyContractedUnitPrice"), sum("PricingCurrencyEffectiveCost"),
		price("PricingCurrencyListUnitPrice"), sum("PricingQuantity"), s("PricingUnit"), s("ProviderName"),
		s("PublisherName"), s("RegionId"), s("RegionName"), s("ResourceId"), s("ResourceName"),
		s("ResourceType"), s("ServiceCategory"), s("ServiceName"), s("ServiceSubcategory"), s("SkuId"),
		s("SkuMeter"), s("SkuPriceDetails"), s("SkuPriceId"), s("SubAccountId"), s("SubAccountName"),
		s("SubAccountType"), {"Tags", "map", focusDim}, s("x_Operation"), s("x_ServiceCode"),
	}
}

func (c FocusColumn) viewColumn(doc string) ViewColumn {
	switch c.Type {
	case "double":
		return ViewColumn{strings.ToLower(c.Name), "double", "double", "DECIMAL", doc}
	case "timestamp":
		return ViewColumn{strings.ToLower(c.Name), "timestamp", "timestamp", "DATETIME", doc}
	case "map":
		return ViewColumn{strings.ToLower(c.Name), "map<string,string>", "map(varchar,varchar)", "", doc}
	case "boolean":
		return ViewColumn{strings.ToLower(c.Name), "boolean", "boolean", "BOOLEAN", doc}
	}
	return ViewColumn{strings.ToLower(c.Name), "string", "varchar", "STRING", doc}
}

// focusAddedColumns follow the export's columns: FOCUS 1.3's provider and
// split cost allocation columns, then the Kubernetes context FOCUS has no
// column for (x_ prefixed, as FOCUS allows custom columns).
func focusAddedColumns() []struct {
	Col FocusColumn
	Doc string
} {
	type cd = struct {
		Col FocusColumn
		Doc string
	}
	s := func(n, doc string) cd { return cd{FocusColumn{n, "string", focusDim}, doc} }
	return []cd{
		s("ServiceProviderName", "FOCUS 1.3: the provider of the service (the export's ProviderName)"),
		s("HostProviderName", "FOCUS 1.3: the provider hosting the resource (the export's ProviderName)"),
		s("AllocatedMethodId", "FOCUS 1.3: "+FocusMethodID+" on allocated charges (docs/focus.md), null otherwise"),
		s("AllocatedMethodDetails", "FOCUS 1.3: JSON object {\"Elements\":[{\"AllocatedRatio\":share}]}, null when not allocated"),
		s("AllocatedResourceId", "FOCUS 1.3: <cluster ARN>/<namespace>/<workload kind>/<workload>; null for the node's idle and unallocated lines"),
		s("AllocatedResourceName", "FOCUS 1.3: <namespace>/<workload>; null when AllocatedResourceId is null"),
		s("AllocatedTags", "FOCUS 1.3: JSON object of the workload's "+FocusTagPrefix+" tags (cluster, namespace, workload kind); null when AllocatedResourceId is null"),
		s("x_ClusterArn", "EKS cluster ARN of the allocated charge"),
		s("x_ClusterName", "cluster name"),
		s("x_Namespace", "Kubernetes namespace; __idle__ for the node's idle"),
		s("x_ControllerKind", "workload kind: the controller kind, or pod for a pod without a controller"),
		s("x_Controller", "workload: the controller name, or the pod name"),
		s("x_Node", "Kubernetes node of the origin resource (for a volume, the node Kubecost names)"),
		s("x_ResourceKind", "instance, volume, data_transfer or load_balancer: the split's resource kind"),
		{FocusColumn{"x_AllocatedShare", "double", focusPrice}, "the share of the origin charge (AllocatedRatio), null when not allocated"},
	}
}

// focusColumns are every column of both views, in order.
func focusColumns() []ViewColumn {
	var cols []ViewColumn
	for _, c := range FocusExportColumns() {
		doc := "from the AWS FOCUS export's origin charge"
		if c.Kind == focusSum {
			doc = "the origin charge's value times the share (allocated charges sum to the origin's)"
		}
		cols = append(cols, c.viewColumn(doc))
	}
	for _, a := range focusAddedColumns() {
		cols = append(cols, a.Col.viewColumn(a.Doc))
	}
	return cols
}

// FocusOriginCURView is the view of the CUR 2.0 origin charges, for users
// with a CUR 2.0 export and no FOCUS one: the module creates it when its
// origin is "cur", and the two FOCUS views read it in the export's place.
const FocusOriginCURView = "focus_origin_cur"

// focusOriginCURColumnsView are the origin view's columns: the export's.
func focusOriginCURColumnsView() []ViewColumn {
	var cols []ViewColumn
	for _, c := range FocusExportColumns() {
		cols = append(cols, c.viewColumn("the CUR 2.0 resource line's value by AWS's FOCUS 1.2 table dictionary"))
	}
	return cols
}

// FocusViews renders the FOCUS views: the two FOCUS views, then the CUR
// 2.0 origin view (template variables cur_database and cur_table, as the
// bill module's).
func FocusViews() []BillView {
	return []BillView{
		{
			Name:        "focus",
			Description: "FOCUS 1.3 Cost and Usage: each cluster's allocated charges, Kubecost's split of the AWS FOCUS export's origin charges.",
			Columns:     focusColumns(),
			SQL:         focusSQL(),
		},
		{
			Name:        "focus_replaced",
			Description: "The AWS FOCUS export with each matched origin charge replaced by its allocated charges: its totals equal the export's.",
			Columns:     focusColumns(),
			SQL:         focusReplacedSQL(),
		},
		{
			Name:        FocusOriginCURView,
			Description: "FOCUS 1.2 origin charges from the CUR 2.0 export's resource-level usage lines, for the FOCUS views when the organisation has no AWS FOCUS export.",
			Columns:     focusOriginCURColumnsView(),
			SQL:         FocusOriginCURSQL(`"${cur_database}"."${cur_table}"`),
		},
	}
}

// FocusViewTemplatePath is the template of one FOCUS view.
func FocusViewTemplatePath(name string) string {
	return FocusModuleDir + "/templates/" + name + ".sql.tftpl"
}

// FocusViewFiles are the generated files of the bill-focus module.
func FocusViewFiles() ([]File, error) {
	views := FocusViews()
	b, err := json.MarshalIndent(map[string]any{"method_id": FocusMethodID, "views": views}, "", "  ")
	if err != nil {
		return nil, err
	}
	files := []File{{FocusViewsJSONPath, append(b, '\n')}}
	for _, v := range views {
		files = append(files, File{FocusViewTemplatePath(v.Name), []byte(v.SQL)})
	}
	return files, nil
}

// KindName is how an allocated charge carries the column: dim (copied),
// price (a unit price, copied) or sum (times the share).
func (c FocusColumn) KindName() string {
	return [...]string{"dim", "price", "sum"}[c.Kind]
}
