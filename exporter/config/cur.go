package config

import (
	"cmp"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
)

// BillLocation is where the report reads the bill: a CUR 2.0 Data Export
// with split cost allocation data (issue 43). The location is a
// destination of its own (a bucket and prefix, or a directory), opened by
// destination.Open like the archive.
type BillLocation struct {
	CURLocation string `env:"CUR_EXPORT_LOCATION" flag:"cur" desc:"a CUR 2.0 Data Export with split cost allocation data to compare Kubecost with the bill: s3://bucket/prefix/ (the export's folder, which holds data/BILLING_PERIOD=YYYY-MM/, or any folder above its BILLING_PERIOD= folders) or a local directory of the same layout; adds the section 'Kubecost and the bill' (default: no comparison)"`
	CURRegion   string `env:"CUR_EXPORT_REGION" flag:"cur-region" desc:"the region of the CUR export's bucket (default: -region)"`

	// CUR is CURLocation as destination settings; nil without one.
	CUR *destination.Settings
}

// billRules check the location with the destination's own rules for a
// bucket name and a prefix (destination.ParseLocation), so the CUR's
// bucket is held to what the archive's is.
func billRules() []rule[Report] {
	return []rule[Report]{
		{"CUR_EXPORT_LOCATION", func(r *Report, bad badFunc) {
			loc := strings.TrimSpace(r.CURLocation)
			if loc == "" {
				return
			}
			s := destination.ParseLocation(loc, func(format string, args ...any) { bad(r.CURLocation, format, args...) })
			if s != nil {
				// The bill's bucket is described like the archive's: its
				// region (-cur-region, else -region) and the report's
				// request timeout travel in its settings, not beside them.
				s.Region, s.RequestTimeout = cmp.Or(r.CURRegion, r.Region), r.RequestTimeout
				r.CUR = s
			}
		}},
		{"CUR_EXPORT_REGION", func(r *Report, bad badFunc) {
			if r.CURRegion != "" {
				matches(func(r *Report) string { return r.CURRegion }, regionRE, regionAccepted)(r, bad)
			}
			if r.CUR != nil && !r.CUR.IsDir() && cmp.Or(r.CURRegion, r.Region) == "" {
				bad("", "required with an S3 location: the region of the CUR export's bucket (or -region)")
			}
		}},
	}
}
