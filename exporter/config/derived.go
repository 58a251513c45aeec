package config

import (
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Cluster is what CLUSTER_ID says about the cluster.
type Cluster = exporter.ClusterARN

// Cluster parses CLUSTER_ID. Call it only on a validated Config.
func (c *Config) Cluster() Cluster { return parseCluster(c.ClusterID) }

func parseCluster(arn string) Cluster {
	c, _ := exporter.ParseClusterARN(arn)
	return c
}

func isClusterARN(arn string) bool { _, ok := exporter.ParseClusterARN(arn); return ok }

// BucketOwner is the account every S3 call names as ExpectedBucketOwner
// (destination.Settings.BucketOwner), the cluster's by default.
// Validation requires S3_EXPECTED_BUCKET_OWNER when the clusters are in
// several accounts, so Home's is the one account there is.
func (c *Config) BucketOwner() string { return c.Settings.BucketOwner(c.Home().Account) }

// LabelKeys returns the LABELS keys in order.
func (c *Config) LabelKeys() []string { return SplitList(c.Labels) }

// AnnotationKeys returns the ANNOTATIONS keys in order.
func (c *Config) AnnotationKeys() []string { return SplitList(c.Annotations) }

// Step is the Kubecost step for GRANULARITY.
func (c *Config) Step() time.Duration {
	if c.Granularity == "hourly" {
		return time.Hour
	}
	return 24 * time.Hour
}

// AggregateParam is the explicit `aggregate` query value. Kubecost 2.x
// returns namespace rows when aggregate is omitted, so "container" is sent
// as the full property list that identifies a container.
func (c *Config) AggregateParam() string {
	if c.Aggregation == "container" {
		return "cluster,node,namespace,pod,container"
	}
	return c.Aggregation
}

// AllocationURL is the full URL of the Allocation API.
func (c *Config) AllocationURL() string {
	return c.AllocationURLAt(c.KubecostAPIEndpoint)
}

// SecretsInAWS reports whether Kubecost's CA bundle or bearer token is a
// Secrets Manager secret: AWS credentials are then needed even for a
// directory archive.
func (c *Config) SecretsInAWS() bool { return c.CASecretName != "" || c.BearerSecret != "" }

// ForceDays parses FORCE_DATES. Call it only on a validated Config.
func (c *Config) ForceDays() []time.Time {
	var out []time.Time
	for _, d := range SplitList(c.ForceDates) {
		if t, err := time.Parse(time.DateOnly, d); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// Settle is SETTLE_HOURS as a duration.
func (w Window) Settle() time.Duration { return time.Duration(w.SettleHours) * time.Hour }
