package bill_test

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// The dictionary does not say how a Data Export stores its timestamps;
// the reader takes every way Parquet has: INT64 in ms, us or ns,
// UTC-adjusted or not, and the legacy INT96.
// The columns every line needs, and one start column per encoding.
type (
	startMicrosLocal struct {
		Operation  string    `parquet:"line_item_operation"`
		UsageType  string    `parquet:"line_item_usage_type"`
		ResourceID string    `parquet:"line_item_resource_id"`
		SplitCost  float64   `parquet:"split_line_item_split_cost"`
		Start      time.Time `parquet:"line_item_usage_start_date,timestamp(microsecond:local)"`
	}
	startNanos struct {
		Operation  string    `parquet:"line_item_operation"`
		UsageType  string    `parquet:"line_item_usage_type"`
		ResourceID string    `parquet:"line_item_resource_id"`
		SplitCost  float64   `parquet:"split_line_item_split_cost"`
		Start      time.Time `parquet:"line_item_usage_start_date,timestamp(nanosecond)"`
	}
	startInt96 struct {
		Operation  string           `parquet:"line_item_operation"`
		UsageType  string           `parquet:"line_item_usage_type"`
		ResourceID string           `parquet:"line_item_resource_id"`
		SplitCost  float64          `parquet:"split_line_item_split_cost"`
		Start      deprecated.Int96 `parquet:"line_item_usage_start_date"`
	}
)

func int96(t time.Time) deprecated.Int96 {
	day := t.Unix()/86400 + 2440588
	nanos := uint64(t.UnixNano() % (86400 * 1e9))
	return deprecated.Int96{uint32(nanos), uint32(nanos >> 32), uint32(day)}
}

const (
	tsOp    = "EKSPod-EC2"
	tsUsage = "USE1-EKS-EC2-vCPU-Hours"
)

var tsID = curfixture.PodID(curfixture.AccountA, "prod", "payments", "api")

// readOne reads a file of one line, whose parent is null: kept, as its
// split cost is not 0.
func readOne[T any](t *testing.T, line T) *bill.Summary {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []T{line}); err != nil {
		t.Fatal(err)
	}
	a := bill.NewAggregator(time.Time{}, time.Time{})
	if err := a.ReadFile(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
		t.Fatal(err)
	}
	return a.Summary()
}

func TestTimestampEncodings(t *testing.T) {
	at := time.Date(2026, 1, 14, 23, 59, 59, 0, time.UTC) // a second before midnight
	for name, s := range map[string]*bill.Summary{
		"micros local": readOne(t, startMicrosLocal{tsOp, tsUsage, tsID, 0.5, at}),
		"nanos utc":    readOne(t, startNanos{tsOp, tsUsage, tsID, 0.5, at}),
		"int96":        readOne(t, startInt96{tsOp, tsUsage, tsID, 0.5, int96(at)}),
	} {
		keys := slices.Collect(maps.Keys(s.Rows))
		if len(keys) != 1 || !keys[0].Day.Equal(curfixture.Day1) || s.Rows[keys[0]].ByKind[bill.CPU][bill.MSplit] != 0.5 {
			t.Errorf("%s: %v %+v", name, keys, s.Rows)
		}
	}
}
