package curfixture

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/parquet-go/parquet-go"
)

// FocusRow is one line of an AWS FOCUS 1.2 export (Data Exports table
// FOCUS_1_2_AWS), with the column names and types of AWS's table
// dictionary
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-focus-1-2-aws-columns.html):
// strings, doubles, timestamp_milliseconds, and Tags as map<string,string>.
// A nil string or number is null.
type FocusRow struct {
	AvailabilityZone                   *string            `parquet:"AvailabilityZone"`
	BilledCost                         *float64           `parquet:"BilledCost"`
	BillingAccountId                   *string            `parquet:"BillingAccountId"`
	BillingAccountName                 *string            `parquet:"BillingAccountName"`
	BillingAccountType                 *string            `parquet:"BillingAccountType"`
	BillingCurrency                    *string            `parquet:"BillingCurrency"`
	BillingPeriodEnd                   *time.Time         `parquet:"BillingPeriodEnd,timestamp(millisecond)"`
	BillingPeriodStart                 *time.Time         `parquet:"BillingPeriodStart,timestamp(millisecond)"`
	CapacityReservationId              *string            `parquet:"CapacityReservationId"`
	CapacityReservationStatus          *string            `parquet:"CapacityReservationStatus"`
	ChargeCategory                     *string            `parquet:"ChargeCategory"`
	ChargeClass                        *string            `parquet:"ChargeClass"`
	ChargeDescription                  *string            `parquet:"ChargeDescription"`
	ChargeFrequency                    *string            `parquet:"ChargeFrequency"`
	ChargePeriodEnd                    *time.Time         `parquet:"ChargePeriodEnd,timestamp(millisecond)"`
	ChargePeriodStart                  *time.Time         `parquet:"ChargePeriodStart,timestamp(millisecond)"`
	CommitmentDiscountCategory         *string            `parquet:"CommitmentDiscountCategory"`
	CommitmentDiscountId               *string            `parquet:"CommitmentDiscountId"`
	CommitmentDiscountName             *string            `parquet:"CommitmentDiscountName"`
	CommitmentDiscountQuantity         *float64           `parquet:"CommitmentDiscountQuantity"`
	CommitmentDiscountStatus           *string            `parquet:"CommitmentDiscountStatus"`
	CommitmentDiscountType             *string            `parquet:"CommitmentDiscountType"`
	CommitmentDiscountUnit             *string            `parquet:"CommitmentDiscountUnit"`
	ConsumedQuantity                   *float64           `parquet:"ConsumedQuantity"`
	ConsumedUnit                       *string            `parquet:"ConsumedUnit"`
	ContractedCost                     *float64           `parquet:"ContractedCost"`
	ContractedUnitPrice                *float64           `parquet:"ContractedUnitPrice"`
	EffectiveCost                      *float64           `parquet:"EffectiveCost"`
	InvoiceIssuerName                  *string            `parquet:"InvoiceIssuerName"`
	ListCost                           *float64           `parquet:"ListCost"`
	ListUnitPrice                      *float64           `parquet:"ListUnitPrice"`
	PricingCategory                    *string            `parquet:"PricingCategory"`
	PricingCurrency                    *string            `parquet:"PricingCurrency"`
	PricingCurrencyContractedUnitPrice *float64           `parquet:"PricingCurrencyContractedUnitPrice"`
	PricingCurrencyEffectiveCost       *float64           `parquet:"PricingCurrencyEffectiveCost"`
	PricingCurrencyListUnitPrice       *float64           `parquet:"PricingCurrencyListUnitPrice"`
	PricingQuantity                    *float64           `parquet:"PricingQuantity"`
	PricingUnit                        *string            `parquet:"PricingUnit"`
	ProviderName                       *string            `parquet:"ProviderName"`
	PublisherName                      *string            `parquet:"PublisherName"`
	RegionId                           *string            `parquet:"RegionId"`
	RegionName                         *string            `parquet:"RegionName"`
	ResourceId                         *string            `parquet:"ResourceId"`
	ResourceName                       *string            `parquet:"ResourceName"`
	ResourceType                       *string            `parquet:"ResourceType"`
	ServiceCategory                    *string            `parquet:"ServiceCategory"`
	ServiceName                        *string            `parquet:"ServiceName"`
	ServiceSubcategory                 *string            `parquet:"ServiceSubcategory"`
	SkuId                              *string            `parquet:"SkuId"`
	SkuMeter                           *string            `parquet:"SkuMeter"`
	SkuPriceDetails                    *string            `parquet:"SkuPriceDetails"`
	SkuPriceId                         *string            `parquet:"SkuPriceId"`
	SubAccountId                       *string            `parquet:"SubAccountId"`
	SubAccountName                     *string            `parquet:"SubAccountName"`
	SubAccountType                     *string            `parquet:"SubAccountType"`
	Tags                               map[string]string  `parquet:"Tags,optional"`
	XDiscounts                         map[string]float64 `parquet:"x_Discounts,optional"`
	XOperation                         *string            `parquet:"x_Operation"`
	XServiceCode                       *string            `parquet:"x_ServiceCode"`
}

// S is a string for FocusRow's nullable fields.
func S(v string) *string { return &v }

// T is a time for FocusRow's nullable fields.
func T(v time.Time) *time.Time { v = v.UTC(); return &v }

// FocusExport is the Data Export name the FOCUS fixtures are written under.
const FocusExport = "focus-export"

// WriteFocusExport writes rows under dir as a FOCUS 1.2 Data Export named
// export does: one snappy Parquet file per billing period (the month of
// BillingPeriodStart), at Key(export, period). It returns the keys, sorted.
func WriteFocusExport(dir, export string, rows []FocusRow) ([]string, error) {
	byPeriod := map[time.Time][]FocusRow{}
	for _, r := range rows {
		if r.BillingPeriodStart == nil {
			return nil, fmt.Errorf("curfixture: FOCUS line without BillingPeriodStart")
		}
		byPeriod[*r.BillingPeriodStart] = append(byPeriod[*r.BillingPeriodStart], r)
	}
	var keys []string
	for p, rs := range byPeriod {
		key := Key(export, p)
		path := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("curfixture: %w", err)
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("curfixture: %w", err)
		}
		pw := parquet.NewGenericWriter[FocusRow](f, parquet.Compression(&parquet.Snappy))
		if _, err := pw.Write(rs); err != nil {
			f.Close()
			return nil, fmt.Errorf("curfixture: write %s: %w", key, err)
		}
		if err := pw.Close(); err != nil {
			f.Close()
			return nil, fmt.Errorf("curfixture: close %s: %w", key, err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("curfixture: %w", err)
		}
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys, nil
}

// FocusLine is a usage line of one resource for one hour at a list price
// per hour, billed at billed and amortized at effective per hour: the
// shape of AWS's EC2 and EBS lines in FOCUS, with every column the
// dictionary marks as not null set.
func FocusLine(account, resource, service, sku string, start time.Time, list, billed, effective float64) FocusRow {
	start = start.UTC()
	period := time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, time.UTC)
	q := 1.0
	return FocusRow{
		AvailabilityZone: S("eu-west-1a"), BilledCost: &billed, BillingAccountId: S("999988887777"),
		BillingAccountName: S("org-payer"), BillingAccountType: S("Billing Account"), BillingCurrency: S("USD"),
		BillingPeriodStart: T(period), BillingPeriodEnd: T(period.AddDate(0, 1, 0)),
		ChargeCategory: S("Usage"), ChargeDescription: S(sku + " usage"), ChargeFrequency: S("Usage-Based"),
		ChargePeriodStart: T(start), ChargePeriodEnd: T(start.Add(time.Hour)),
		ConsumedQuantity: &q, ConsumedUnit: S("Hours"), ContractedCost: F(list), ContractedUnitPrice: F(list),
		EffectiveCost: &effective, InvoiceIssuerName: S("Amazon Web Services, Inc."), ListCost: F(list),
		ListUnitPrice: F(list), PricingCategory: S("Standard"), PricingCurrency: S("USD"),
		PricingCurrencyContractedUnitPrice: F(list), PricingCurrencyEffectiveCost: F(effective),
		PricingCurrencyListUnitPrice: F(list), PricingQuantity: F(q), PricingUnit: S("Hours"),
		ProviderName: S("AWS"), PublisherName: S("AWS"), RegionId: S("eu-west-1"), RegionName: S("Europe (Ireland)"),
		ResourceId: S(resource), ResourceType: S(service), ServiceCategory: S("Compute"), ServiceName: S(service),
		SkuId: S(sku), SkuPriceId: S(sku + "-price"), SubAccountId: S(account), SubAccountName: S("workloads"),
		SubAccountType: S("Linked Account"), Tags: map[string]string{"user:team": "platform"},
		XOperation: S("RunInstances"), XServiceCode: S("AmazonEC2"),
	}
}
