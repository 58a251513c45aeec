package exporter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// FingerprintInput is everything that changes a day file's bytes or meaning. Anything else
// (version, CONCURRENCY, timeouts) stays out, or a change would re-export every day for nothing.
type FingerprintInput struct {
	ClusterID   string   // CLUSTER_ID: properties.clusterid and eksClusterName
	Labels      []string // LABELS, in order: each is a column
	Annotations []string // ANNOTATIONS, in order
	Aggregation string   // AGGREGATION
	Granularity string   // GRANULARITY
	// Query is the canonical day query without window (aggregate, step, accumulate, idle, sharing).
	Query string
	Codec Codec
}

// Fingerprint is a short hash of in and the schema version and columns it implies, stored as
// MetaFingerprint so a later run tells days made with another config. 16 hex digits (64
// bits) are plenty for a handful of configs.
func Fingerprint(in FingerprintInput) string {
	h := sha256.New()
	// One named field per line: no two inputs render the same text.
	fmt.Fprintf(h, "fingerprint-format=1\n")
	fmt.Fprintf(h, "schema-version=%s\n", schema.Version)
	for _, c := range schema.Columns(in.Labels, in.Annotations) {
		fmt.Fprintf(h, "column=%q %s\n", c.Name, c.Type)
	}
	fmt.Fprintf(h, "cluster-id=%q\n", in.ClusterID)
	fmt.Fprintf(h, "aggregation=%q\ngranularity=%q\n", in.Aggregation, in.Granularity)
	fmt.Fprintf(h, "query=%q\ncodec=%q\n", strings.TrimSpace(in.Query), in.Codec)
	return hex.EncodeToString(h.Sum(nil))[:16]
}
