// Package objstorecompat holds the exporter's reading of Thanos object
// storage configurations (exporter/destination) to thanos-io/objstore's
// own parser, value for value. It has only tests: objstore is a test-only
// dependency, kept in its own package so that none of its modules reach
// the exporter's binary (go list -deps ./cmd/... does not list it).
package objstorecompat
