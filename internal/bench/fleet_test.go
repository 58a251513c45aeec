package bench

import (
	"strings"
	"testing"
)

func TestParseFleet(t *testing.T) {
	f, err := ParseFleet("4x1.2M")
	if err != nil || f.Clusters != 4 || f.Size.Target != 1_200_000 {
		t.Errorf("ParseFleet(4x1.2M) = %+v, %v", f, err)
	}
	for _, bad := range []string{"", "4", "1x1M", "x1M", "4x", "4xbig", "51x1M"} {
		if _, err := ParseFleet(bad); err == nil {
			t.Errorf("ParseFleet(%q) accepted", bad)
		}
	}
	cfg := fleetConfig(1, f)
	accounts, regions := map[string]bool{}, map[string]bool{}
	for _, m := range cfg.Members {
		accounts[m.Account], regions[m.Config.Region] = true, true
	}
	if len(cfg.Members) != 4 || len(accounts) != 2 || len(regions) != 2 {
		t.Errorf("fleet of %d members in %d accounts and %d regions", len(cfg.Members), len(accounts), len(regions))
	}
}

// The fleet is held to the single-cluster memory targets.
func TestFleetChecks(t *testing.T) {
	for _, tc := range []struct {
		rss        float64
		pass, grow bool
	}{{50, true, true}, {60, true, false}, {160, false, false}} {
		r := fakeReport(map[string]float64{"24k/dir": 40}, map[string]float64{"24k/dir": 2})
		spec, _ := ParseFleet("4x1.2M")
		r.Fleet = &FleetResult{Spec: spec, Runs: []Run{{Rows: 1_200_000, Files: 4}}}
		r.Fleet.Runs[0].M.MaxRSS = int64(tc.rss * (1 << 20))
		var got []bool
		for _, c := range r.Checks() {
			if strings.HasPrefix(c.Target, "federated fleet") {
				if !c.Measured {
					t.Errorf("%s not measured", c.Target)
				}
				got = append(got, c.Pass)
			}
		}
		if len(got) != 2 || got[0] != tc.pass || got[1] != tc.grow {
			t.Errorf("peak %.0f MiB: checks %v, want [%v %v]", tc.rss, got, tc.pass, tc.grow)
		}
		if md := r.Markdown(); !strings.Contains(md, "| 4 | 1.2M | 1200000 | 4 |") {
			t.Errorf("markdown lacks the fleet row:\n%s", md)
		}
	}
}
