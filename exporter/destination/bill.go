package destination

import (
	"cmp"
	"strings"
)

// Bill is where the report reads the bill (docs/bill.md), a CUR 2.0 Data Export: a second
// location (Dest, made by Load, checked by BillRules, opened by Open like the archive). A
// command's configuration embeds it, as it embeds Settings.
type Bill struct {
	BillLocation string `env:"BILL_LOCATION" flag:"bill" desc:"a CUR 2.0 Data Export with split cost allocation data to compare Kubecost with the bill: s3://bucket/prefix/ (the export's folder, which holds data/BILLING_PERIOD=YYYY-MM/, or any folder above its BILLING_PERIOD= folders) or a local directory of the same layout; adds the section 'Kubecost and the bill' (default: no comparison)"`
	BillRegion   string `env:"BILL_REGION" flag:"bill-region" desc:"the region of the bill's bucket (default: -region, else AWS_REGION, else AWS_DEFAULT_REGION, else CLUSTER_ID's)"`
	BillRoleARN  string `env:"BILL_ROLE_ARN" flag:"bill-role-arn" desc:"role to assume to read the bill, when the export is in another account, such as the payer's (default: the archive's credentials)"`
	// The names the bill had before: aliases that log a warning.
	CURLocation string `env:"CUR_EXPORT_LOCATION" flag:"cur" desc:"the old name of BILL_LOCATION (-bill): still read, with a warning"`
	CURRegion   string `env:"CUR_EXPORT_REGION" flag:"cur-region" desc:"the old name of BILL_REGION (-bill-region): still read, with a warning"`

	// Dest is the location as destination settings; nil without one.
	Dest *Settings
}

// billVars name, for the bill, the destination's rules over what a location sets.
var billVars = map[string]string{
	"S3_BUCKET_NAME": "BILL_LOCATION", "S3_PREFIX": "BILL_LOCATION", "AWS_REGION": "BILL_REGION", "IRSA_PARENT_IAM_ROLE_ARN": "BILL_ROLE_ARN",
}

// Load makes the location destination settings: s3://bucket/prefix/ is a bucket and a
// prefix, anything else a directory; its region is BILL_REGION, its role BILL_ROLE_ARN,
// and S3_REQUEST_TIMEOUT bounds its calls too. lookup is as for Settings.Load.
func (b *Bill) Load(archive *Settings, lookup func(string) (string, bool)) {
	loc := b.Source()
	if loc == "" {
		return
	}
	s := &Settings{Region: cmp.Or(b.BillRegion, b.CURRegion), IRSAParentRoleARN: b.BillRoleARN,
		RequestTimeout: archive.RequestTimeout, S3PartSizeMiB: archive.S3PartSizeMiB, roleVar: "BILL_ROLE_ARN"}
	if rest, isS3 := strings.CutPrefix(loc, "s3://"); isS3 {
		s.S3BucketName, s.S3Prefix, _ = strings.Cut(rest, "/")
		if s.S3Prefix != "" && !strings.HasSuffix(s.S3Prefix, "/") {
			s.S3Prefix += "/"
		}
	} else {
		s.OutputDir = loc
	}
	s.Load(lookup)
	b.Dest = s
}

// Source is the location as the user gave it, for the page and errors.
func (b *Bill) Source() string { return strings.TrimSpace(cmp.Or(b.BillLocation, b.CURLocation)) }

// BillRules are the bill's checks: a name and its old name that disagree, a location
// without a bucket, then the destination's rules over the location, named by billVars.
func BillRules() []Rule[Bill] {
	out := []Rule[Bill]{
		{"BILL_LOCATION", func(b *Bill, _ Scope, bad badFunc) {
			sameOrOne(b.BillLocation, b.CURLocation, "CUR_EXPORT_LOCATION", bad)
			if s := b.Dest; s != nil && !s.IsDir() && s.S3BucketName == "" {
				bad(b.Source(), "accepted: s3://bucket/prefix/ or a local directory")
			}
		}},
		{"BILL_REGION", func(b *Bill, _ Scope, bad badFunc) { sameOrOne(b.BillRegion, b.CURRegion, "CUR_EXPORT_REGION", bad) }},
	}
	for _, r := range Rules() {
		if v := billVars[r.Var]; v != "" {
			out = append(out, Rule[Bill]{v, func(b *Bill, sc Scope, bad badFunc) {
				if s := b.Dest; s != nil && (s.IsDir() || s.S3BucketName != "") {
					r.Check(s, sc, bad)
				}
			}})
		}
	}
	return out
}

// sameOrOne refuses a setting and its old name set to different values.
func sameOrOne(v, old, oldName string, bad badFunc) {
	if v != "" && old != "" && strings.TrimSpace(v) != strings.TrimSpace(old) {
		bad(v, "%s=%q is its old name, set to another value: set one of them", oldName, old)
	}
}

// Warnings name the old names in use.
func (b *Bill) Warnings() (w []string) {
	for _, a := range [][3]string{{b.CURLocation, "CUR_EXPORT_LOCATION (-cur)", "BILL_LOCATION (-bill)"},
		{b.CURRegion, "CUR_EXPORT_REGION (-cur-region)", "BILL_REGION (-bill-region)"}} {
		if a[0] != "" {
			w = append(w, a[1]+" is the old name of "+a[2]+"; it still works, but use the new name")
		}
	}
	return w
}
