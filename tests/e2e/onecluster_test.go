package e2e_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// TestOneClusterBothWays exports the same cluster as CLUSTER_ID and as a
// one-entry CLUSTER_ARNS, each under its own S3_PREFIX, and finds the
// same objects (keys, bytes and metadata) and the same summary counts: a
// single cluster is a fleet of one.
func TestOneClusterBothWays(t *testing.T) {
	h := newFleetHarness(t, func(c *kubecostsim.FleetConfig) { c.Members = c.Members[1:2] })
	m := h.fleet.Fleet.Members()[0]
	want := h.wantFleetKeys(20)[m.Config.ClusterName]
	if len(want) < 5 {
		t.Fatalf("the cluster has %d days in the window; the test needs 5", len(want))
	}

	fleetCode, fleetLogs := h.run(map[string]string{"S3_PREFIX": "fleet/"})
	delete(h.env, "CLUSTER_ARNS")
	singleCode, singleLogs := h.run(map[string]string{"S3_PREFIX": "single/", "CLUSTER_ID": m.ARN()})
	if fleetCode != cli.ExitOK || singleCode != cli.ExitOK {
		t.Fatalf("exit %d as a fleet, %d alone\n%s\n%s", fleetCode, singleCode, fleetLogs, singleLogs)
	}

	fleetObjs, singleObjs := h.under("fleet/"), h.under("single/")
	if len(fleetObjs) != len(want) {
		t.Fatalf("the fleet of one wrote %d objects, want %d", len(fleetObjs), len(want))
	}
	if !slices.Equal(slices.Sorted(maps.Keys(fleetObjs)), slices.Sorted(maps.Keys(singleObjs))) {
		t.Fatalf("keys differ:\nfleet  %v\nsingle %v", slices.Sorted(maps.Keys(fleetObjs)), slices.Sorted(maps.Keys(singleObjs)))
	}
	for k, f := range fleetObjs {
		s := singleObjs[k]
		// Single-part uploads: the ETag is the MD5 of the bytes.
		if f.etag != s.etag || !maps.Equal(f.meta, s.meta) {
			t.Errorf("%s differs:\nfleet  %s %v\nsingle %s %v", k, f.etag, f.meta, s.etag, s.meta)
		}
	}

	fleetSum, singleSum := summaryOf(t, fleetLogs), summaryOf(t, singleLogs)
	for _, k := range []string{"msg", "days_available", "days_planned", "days_written", "days_failed", "rows", "bytes"} {
		if fleetSum[k] != singleSum[k] {
			t.Errorf("summary %s: %v as a fleet, %v alone", k, fleetSum[k], singleSum[k])
		}
	}
	if fleetSum["days_written"] != float64(len(want)) {
		t.Errorf("days_written %v, want %d", fleetSum["days_written"], len(want))
	}
	// What differs is what says a fleet: its size and the unmapped count.
	if fleetSum["clusters"] != float64(1) || singleSum["clusters"] != nil {
		t.Errorf("clusters: %v as a fleet, %v alone; want 1 and absent", fleetSum["clusters"], singleSum["clusters"])
	}
}
