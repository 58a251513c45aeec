package metrics

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
)

// RunIDVar names the variable that identifies the scheduled run. The chart
// sets it to the Job's name, so the pod attempts of one Job (backoffLimit)
// push under one run label and the alerts count scheduled runs, not pods.
const RunIDVar = "RUN_ID"

// RunID returns the run's identity: $RUN_ID, else the start time, which
// makes each process its own run.
func RunID(lookup func(string) (string, bool), start time.Time) string {
	if v, ok := lookup(RunIDVar); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return start.UTC().Format(time.RFC3339Nano)
}

// ParseURL checks a PUSHGATEWAY_URL the way the configuration does; it is
// used on its own when the rest of the configuration is invalid, so that a
// configuration error is still reported. Errors never show a password.
func ParseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		safe := "(unparsable URL)"
		if err == nil {
			safe = u.Redacted()
		}
		return "", fmt.Errorf("metrics: PUSHGATEWAY_URL %s is not http(s)://<host>[:port][/path]", safe)
	}
	return raw, nil
}

// clusterNameRE takes the cluster name out of an EKS cluster ARN.
var clusterNameRE = regexp.MustCompile(`^arn:[^:]+:eks:[^:]*:[0-9]*:cluster/([0-9A-Za-z][0-9A-Za-z_-]*)$`)

// ConfigErrorClusters names the groups a configuration error is pushed to:
// the clusters that CLUSTER_ID or CLUSTER_ARNS still name with a well-formed
// ARN, or one group without a cluster label when none does (a bad ARN, or
// a map in a file that is not read for this). Each name appears once.
func ConfigErrorClusters(lookup func(string) (string, bool)) []string {
	var arns []string
	if v, ok := lookup("CLUSTER_ID"); ok {
		arns = append(arns, strings.TrimSpace(v))
	}
	if v, ok := lookup("CLUSTER_ARNS"); ok {
		for _, pair := range strings.Split(v, ",") {
			if _, arn, ok := strings.Cut(pair, "="); ok {
				arns = append(arns, strings.TrimSpace(arn))
			}
		}
	}
	var names []string
	seen := map[string]bool{}
	for _, arn := range arns {
		if m := clusterNameRE.FindStringSubmatch(arn); m != nil && !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		return []string{""}
	}
	return names
}

// Outcome is what one cluster's group reports for a run.
type Outcome struct {
	Cluster string      // EKS cluster name: the group's cluster label
	Summary app.Summary // its plan and days; a zero Plan means it never planned
	Err     error       // nil when this cluster's part of the run succeeded
}

// FleetOutcomes decides what each mapped cluster of a federated run
// reports, given the clusters the configuration maps (names, in member
// order), what RunFleet returned and its error. A cluster has failed when
// its own planning or days failed, when the run failed on unmapped
// clusters (FAIL_ON_UNMAPPED_CLUSTERS: the exit status is 1 for all), or
// when the run stopped before per-cluster work (Kubecost unreachable, the
// run could not be wired): then it did not plan either, so it reports no
// archive_missing_days rather than a hole count of zero.
func FleetOutcomes(names []string, sum app.FleetSummary, err error) []Outcome {
	byName := map[string]app.ClusterResult{}
	for _, c := range sum.Clusters {
		byName[c.ARN[strings.LastIndexByte(c.ARN, '/')+1:]] = c
	}
	perCluster := err == nil || errors.Is(err, app.ErrDaysFailed) || errors.Is(err, app.ErrUnmappedClusters)
	out := make([]Outcome, 0, len(names))
	for _, name := range names {
		c, known := byName[name]
		o := Outcome{Cluster: name, Summary: c.Summary}
		switch {
		case !known || !perCluster:
			// The run never reached this cluster's plan.
			o.Summary.Plan = exporter.Plan{}
			o.Err = runErr(err)
		case c.PlanErr != nil:
			o.Summary.Plan = exporter.Plan{}
			o.Err = c.PlanErr
		case len(c.Failed()) > 0:
			o.Err = app.ErrDaysFailed
		case errors.Is(err, app.ErrUnmappedClusters):
			o.Err = app.ErrUnmappedClusters
		}
		out = append(out, o)
	}
	return out
}

func runErr(err error) error {
	if err == nil {
		return errors.New("the run did not reach this cluster")
	}
	return err
}
