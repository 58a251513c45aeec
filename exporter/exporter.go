// Package exporter holds the domain of kubecost-s3-exporter: the interfaces the Kubecost
// client and the object stores implement, the object key layout (CONTRACT §3) and the one
// copy of each grammar: archive keys (ParseKey, Layout), EKS ARNs and AWS names (names.go),
// base URLs (urls.go). Also the backfill window and backlog (window.go), the pure planner
// (plan.go), the config fingerprint, URL redaction (redact.go) and FieldError. Each external
// system lives in its own subpackage; this package imports none of them.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Version is the exporter's version, stamped by the Makefile's -ldflags -X.
var Version = "dev"

// ErrNotExist is returned by ObjectStore.Open and Head for a missing key.
var ErrNotExist = errors.New("object does not exist")

// ErrPreconditionFailed is returned by ObjectStore.Put when its Precondition does not hold
// (HTTP 412 on S3): another writer got there first; nothing was written.
var ErrPreconditionFailed = errors.New("precondition failed: the object was written by someone else")

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	Key  string
	Size int64
	ETag string // Precondition{IfMatch: ETag} replaces exactly this version
}

// Precondition makes a Put conditional, so that concurrent runs never overwrite each
// other's work. The zero value writes unconditionally.
type Precondition struct {
	IfNoneMatch bool   // create only if the key does not exist (If-None-Match: *)
	IfMatch     string // replace only if the current ETag is this one (If-Match: <etag>)
}

// CreateOnly is the precondition of a new day: write only if absent.
var CreateOnly = Precondition{IfNoneMatch: true}

// ReplaceOnly is the precondition of a re-export: replace only the version seen when planning.
func ReplaceOnly(etag string) Precondition { return Precondition{IfMatch: etag} }

// ObjectAttrs is what Head tells about one object without reading it.
type ObjectAttrs struct {
	Size int64
	// ETag changes whenever the object is replaced. It is opaque: compare it only for
	// equality, and pass it back unchanged to a conditional write.
	ETag string
	// Metadata is the user metadata given to Put, keys lower-case (as S3 returns them). Never nil.
	Metadata map[string]string
}

// Reader is what the report and the bill's reader need of a store: list and read, never
// write (as objstore's BucketReader), so a read-only credential suffices.
type Reader interface {
	// List calls fn for each key under prefix after startAfter, in lexical order, until fn errs.
	List(ctx context.Context, prefix, startAfter string, fn func(ObjectInfo) error) error
	// Open returns ErrNotExist for a missing key.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// ObjectStore is where day files go: S3, or a local directory.
type ObjectStore interface {
	Reader
	// Put stores r under key when cond holds, else returns an error wrapping
	// ErrPreconditionFailed. The object appears whole or not at all, even if r or ctx fails.
	Put(ctx context.Context, key string, r io.Reader, meta map[string]string, cond Precondition) error
	// Delete removes an object; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Head returns ErrNotExist for a missing key.
	Head(ctx context.Context, key string) (ObjectAttrs, error)
}

// UploadJanitor is implemented by stores that can leave unfinished uploads behind when the
// process is killed (S3 multipart uploads).
type UploadJanitor interface {
	// AbortStale aborts the uploads under prefix started before olderThan whose key match
	// accepts, and returns how many.
	AbortStale(ctx context.Context, prefix string, olderThan time.Time, match func(key string) bool) (int, error)
}

// RecordSink receives a day's allocations from an AllocationSource.
type RecordSink interface {
	// Write consumes r before returning: the caller reuses r.
	Write(r *schema.Record) error
	// Reset discards everything written so far: the source refetches the day after rows
	// of a failed response were written.
	Reset() error
}

// DayTotal is one day Kubecost has, with the sum of totalCost in the availability query
// (aggregate=cluster, step=1d). A later change means Kubecost reconciled the day again.
type DayTotal struct {
	Day       time.Time // UTC midnight
	TotalCost float64
}

// AllocationSource is the Kubecost (or OpenCost) Allocation API.
type AllocationSource interface {
	// AvailableDays returns the days in [from, to) with a non-empty allocation set, ascending.
	AvailableDays(ctx context.Context, from, to time.Time) ([]DayTotal, error)
	// FetchDay streams every allocation of the UTC day starting at day into sink.
	FetchDay(ctx context.Context, day time.Time, sink RecordSink) error
}

// ErrServerUnsupported marks a failed day whose cause every day of the run would meet: the
// server cannot answer a query the run needs (an OpenCost ignoring a federated export's
// cluster filter, say). The run stops and says what to change: a retry fails the same.
var ErrServerUnsupported = errors.New("the server cannot answer the queries this run needs")

// Codec is a Parquet compression codec; it also names the file suffix.
type Codec string

// Supported codecs. Snappy is the default, as in the Python exporter.
const (
	Snappy Codec = "snappy"
	Zstd   Codec = "zstd"
	Gzip   Codec = "gzip"
)

// Codecs lists every supported codec.
func Codecs() []Codec { return []Codec{Snappy, Zstd, Gzip} }

// Layout renders and recognises the object keys of one cluster:
// [prefix]account_id=<account>/region=<region>/year=<YYYY>/month=<MM>/<YYYY-MM-DD>_<cluster>.<codec>.parquet
type Layout struct {
	Prefix  string // "" or ends with "/"
	Account string
	Region  string
	Cluster string // EKS cluster name
}

// PartitionPrefix is the key prefix of every file of this account and region, any cluster.
func (l Layout) PartitionPrefix() string {
	return fmt.Sprintf("%saccount_id=%s/region=%s/", l.Prefix, l.Account, l.Region)
}

// Key is the object key of day, written with codec.
func (l Layout) Key(day time.Time, codec Codec) string {
	return fmt.Sprintf("%s%s_%s.%s.parquet", l.MonthPrefix(day), day.UTC().Format(time.DateOnly), l.Cluster, codec)
}

// MonthPrefix is the key prefix of day's month; listing starts there to skip earlier months.
func (l Layout) MonthPrefix(day time.Time) string {
	day = day.UTC()
	return fmt.Sprintf("%syear=%04d/month=%02d/", l.PartitionPrefix(), day.Year(), int(day.Month()))
}

// ParseDay returns the day of key when its file name is exactly
// <YYYY-MM-DD>_<cluster>.<codec>.parquet for this cluster and a known codec: cluster
// "prod" must never claim the files of "prod-eu".
func (l Layout) ParseDay(key string) (time.Time, bool) {
	d, _, ok := l.ParseKey(key)
	return d, ok
}

// ParseKey is ParseDay that also returns the codec. Only the file name is read: the
// listing that found key was already under this cluster's partition.
func (l Layout) ParseKey(key string) (time.Time, Codec, bool) {
	day, cluster, codec, ok := parseFileName(key[strings.LastIndexByte(key, '/')+1:])
	if !ok || cluster != l.Cluster {
		return time.Time{}, "", false
	}
	return day, codec, true
}

// parseFileName is the one grammar of a day file's name: the cluster is everything
// between the date's underscore and the codec.
func parseFileName(name string) (day time.Time, cluster string, codec Codec, ok bool) {
	const dateLen = len(time.DateOnly)
	rest, found := strings.CutSuffix(name, ".parquet")
	dot := strings.LastIndexByte(rest, '.')
	if !found || len(name) < dateLen+1 || name[dateLen] != '_' || dot < dateLen+2 {
		return time.Time{}, "", "", false
	}
	day, err := time.Parse(time.DateOnly, name[:dateLen])
	if err != nil || !slices.Contains(Codecs(), Codec(rest[dot+1:])) {
		return time.Time{}, "", "", false
	}
	return day, rest[dateLen+1 : dot], Codec(rest[dot+1:]), true
}

// Key is what a whole archive key says (CONTRACT §3).
type Key struct {
	Prefix                   string // what comes before account_id=, "" or ending in /
	Account, Region, Cluster string
	Day                      time.Time
	Codec                    Codec
}

// ParseKey is the one grammar of a whole archive key, as Layout.Key writes it; the year and
// month folders must agree with the file name's day.
func ParseKey(key string) (Key, bool) {
	parts := strings.Split(key, "/")
	n := len(parts)
	if n < 5 {
		return Key{}, false
	}
	account, ok1 := strings.CutPrefix(parts[n-5], "account_id=")
	region, ok2 := strings.CutPrefix(parts[n-4], "region=")
	day, cluster, codec, ok3 := parseFileName(parts[n-1])
	if !ok1 || !ok2 || !ok3 || account == "" || strings.Trim(account, "0123456789") != "" || region == "" ||
		strings.Trim(region, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" ||
		parts[n-3] != fmt.Sprintf("year=%04d", day.Year()) || parts[n-2] != fmt.Sprintf("month=%02d", int(day.Month())) {
		return Key{}, false
	}
	prefix := strings.Join(parts[:n-5], "/")
	if prefix != "" {
		prefix += "/"
	}
	return Key{Prefix: prefix, Account: account, Region: region, Cluster: cluster, Day: day, Codec: codec}, true
}

// ContextReader returns a reader that fails with ctx's error once ctx ends, so a copy into
// a store stops even while the producer keeps writing.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx: ctx, r: r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Seconds is a timeout setting (S3_REQUEST_TIMEOUT, CONNECTION_TIMEOUT): a positive
// number of seconds, fractions allowed.
type Seconds time.Duration

// Decode parses v.
func (s *Seconds) Decode(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	// The negated range test also rejects NaN.
	if err != nil || !(f > 0 && f <= 86400) {
		return errors.New("accepted: a number of seconds > 0 and <= 86400")
	}
	*s = Seconds(f * float64(time.Second))
	return nil
}

// Duration returns s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(s) }
