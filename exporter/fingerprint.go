package exporter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// FingerprintInput is everything that changes the bytes or the meaning of
// a day file. Anything else (the exporter's version, CONCURRENCY, timeouts)
// must stay out: a fingerprint that changed for those would re-export every
// day for nothing.
type FingerprintInput struct {
	ClusterID   string   // CLUSTER_ID: properties.clusterid and eksClusterName
	Labels      []string // LABELS, in order: each is a column
	Annotations []string // ANNOTATIONS, in order
	Aggregation string   // AGGREGATION
	Granularity string   // GRANULARITY
	// Query is the Kubecost day query without its window, canonically
	// encoded (aggregate, step, accumulate, idle and sharing flags).
	Query string
	Codec Codec
}

// Fingerprint is a short hash of in and of the schema version and column
// list it implies. It goes into every object's metadata (MetaFingerprint),
// so a later run can tell which stored days were made with another config.
// 16 hex digits (64 bits) are plenty to tell a handful of configs apart.
func Fingerprint(in FingerprintInput) string {
	h := sha256.New()
	// One field per line, each line prefixed by its name: no two different
	// inputs can render the same text, so none share a hash by construction.
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
