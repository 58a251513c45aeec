package split

import (
	"cmp"
	"math"
	"slices"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
)

// SCADCheck holds SCAD's pod lines of one instance-day against the
// instance's own lines: SCAD gives an instance's cost to its pods as
// split cost plus unused cost (sca-eks:
// https://docs.aws.amazon.com/cur/latest/userguide/sca-eks.html), so
// split + unused should be the instance's amortized cost, and the net
// split + net unused its net amortized cost.
type SCADCheck struct {
	Key                          bill.ParentKey
	SCAD, SCADNet                float64 // split + unused, gross and net
	Instance, InstanceNet        float64 // the instance lines (0 when none)
	HasInstance, Agree, NetAgree bool
}

// CheckSCAD compares every instance-day SCAD's pod lines name with the
// instance's lines; Agree is within 1e-9 relative. Sorted by key.
func CheckSCAD(b Bill) []SCADCheck {
	var out []SCADCheck
	for k, p := range b.Parents {
		c := SCADCheck{Key: k, SCAD: p.Split + p.Unused, SCADNet: p.NetSplit + p.NetUnused}
		if r := b.Resources[bill.ResourceKey{Account: k.Account, Region: k.Region, ResourceID: k.InstanceID, Kind: bill.KindInstance, Day: k.Day}]; r != nil {
			c.HasInstance, c.Instance, c.InstanceNet = true, r.Amortized, r.Net
		}
		c.Agree, c.NetAgree = c.HasInstance && agree(c.SCAD, c.Instance), c.HasInstance && agree(c.SCADNet, c.InstanceNet)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b SCADCheck) int {
		return cmp.Or(cmp.Compare(a.Key.Account, b.Key.Account), cmp.Compare(a.Key.InstanceID, b.Key.InstanceID), a.Key.Day.Compare(b.Key.Day))
	})
	return out
}

func agree(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)+math.Abs(b)) }
