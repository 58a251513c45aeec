package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/report"
)

// openBill opens the CUR 2.0 export the report compares Kubecost with
// (-cur, CUR_EXPORT_LOCATION) through destination.Open, as the archive is
// opened: read-only, with the same credential chain and endpoint
// variables. nil without a location.
func openBill(ctx context.Context, rc *config.Report, lookup func(string) (string, bool), log *slog.Logger) (*report.Bill, error) {
	if rc.CUR == nil {
		return nil, nil
	}
	// As config loads the archive's settings: the variables the location
	// must honour (AWS_MAX_ATTEMPTS, the endpoints) come from the lookup.
	rc.CUR.Load(lookup)
	a, err := destination.Open(ctx, rc.CUR, destination.Env{
		Lookup: lookup, Session: "report", ReadOnly: true, Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("the bill at %s: %w", rc.CURLocation, err)
	}
	return &report.Bill{Store: a.Store, Prefix: rc.CUR.S3Prefix, Source: rc.CURLocation}, nil
}
