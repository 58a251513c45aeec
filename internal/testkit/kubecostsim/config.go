// Package kubecostsim simulates the Kubecost / OpenCost Allocation API for
// tests, demos and benchmarks of the exporter.
//
// The simulated cluster is generated deterministically from Config.Seed. Every
// number is derived from (slot, pod generation, container, absolute hour), so a
// day or an hour returns the same allocations whatever window it is queried in.
// Responses are streamed: a 2 GB hourly day never sits in memory.
package kubecostsim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Config describes the simulated cluster and how the server answers.
// The zero value is usable: a small cluster "cluster-one" in us-east-1.
type Config struct {
	Seed        int64
	ClusterName string // Kubecost's cluster id; default "cluster-one"
	// Flavor is which server is simulated: FlavorKubecost (the default)
	// or FlavorOpenCost. It decides the paths served and which query
	// parameters are read (see query.go); the rest are ignored, as the
	// real server ignores them.
	Flavor Flavor
	Region string // default "us-east-1"

	// Size of the cluster. ContainersPerHour, when > 0, overrides Namespaces and
	// PodsPerNamespace so that about that many containers run in an average hour
	// (42000 gives ≈1M allocations for an hourly day at container level).
	Namespaces        int // user namespaces (kube-system and kubecost are added); default 6
	PodsPerNamespace  int // pod slots per user namespace; default 10
	ContainersPerPod  int // mean containers per pod; default 2
	Nodes             int // default: about one node per 12 pods
	ContainersPerHour int
	// IdleNodes adds nodes on which nothing ever runs (not even
	// daemonsets: a tainted node, say): their whole capacity is idle.
	IdleNodes int

	// RetentionDays: sets for days before midnight(Now) − RetentionDays·24h are
	// null. Default 30. HourlyRetentionHours, when > 0, limits windows shorter
	// than a day further (Kubecost keeps hourly ETL for ~49h by default).
	RetentionDays        int
	HourlyRetentionHours int
	Now                  func() time.Time // default time.Now

	// EmptySets renders unavailable sets as {} instead of null.
	EmptySets bool

	Quirks Quirks
	Faults Faults // initial faults; change them at runtime with (*Sim).SetFaults
}

// Quirks make responses awkward in ways real Kubecost responses are.
type Quirks struct {
	NullNumbers  bool           // some zero-valued numbers and efficiencies rendered as null
	NegativeZero bool           // some zero-valued numbers rendered as -0
	OffsetTimes  bool           // every timestamp rendered in Location instead of UTC (same instant)
	Location     *time.Location // default fixed -05:00
	NaNStrings   bool           // some efficiency numbers rendered as the string "NaN"
	ExtraFields  bool           // unknown fields at the top level, in allocations and in properties
	// NullNaN: some containers' CPU usage was NaN in Prometheus, and the
	// core's JSON marshaller (OpenCost's Allocation.MarshalJSON, through
	// jsonEncodeFloat64 and jsonutil.EncodeFloat64) writes NaN and Inf as
	// null: their
	// cpuCoreUsageAverage, cpuEfficiency and totalEfficiency are null.
	NullNaN bool
	// NoProviderID leaves properties.providerID out of every allocation,
	// as OpenCost 1.119 does (opencost/opencost#3538: "the /allocation
	// API endpoint no longer returns the providerID field in the
	// properties object for any allocation records").
	NoProviderID bool
}

// FaultMode selects what a faulty response looks like.
type FaultMode int

const (
	FaultNone        FaultMode = iota
	FaultStatus                // HTTP Status (default 500) with an error body
	FaultHTML                  // 200 with an HTML login page, like a proxy in front of Kubecost
	FaultTruncate              // the real body cut after TruncateAfter bytes, then the connection is dropped
	FaultInvalidJSON           // 200 with malformed JSON
	FaultNullData              // 200 with {"code":200,"data":[null]}
)

func faultModeNames() []string {
	return []string{"none", "status", "html", "truncate", "invalid-json", "null-data"}
}

func (m FaultMode) String() string {
	if names := faultModeNames(); m >= 0 && int(m) < len(names) {
		return names[m]
	}
	return fmt.Sprintf("FaultMode(%d)", int(m))
}

// ParseFaultMode parses the names printed by FaultMode.String.
func ParseFaultMode(s string) (FaultMode, error) {
	names := faultModeNames()
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return FaultMode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown fault mode %q (want one of %s)", s, strings.Join(names, ", "))
}

// ErrorStyle selects the body of FaultStatus responses.
type ErrorStyle int

const (
	ErrorKubecost ErrorStyle = iota // {"code":500,"message":"..."}
	ErrorPlain                      // {"error":"..."}
)

// Faults are injected into HTTP responses (not into WriteResponse).
type Faults struct {
	Mode FaultMode
	// Times > 0 applies Mode to the next Times allocation requests only, then
	// Mode goes back to FaultNone. 0 applies it until changed.
	Times         int
	Status        int           // FaultStatus: HTTP status, default 500
	ErrorStyle    ErrorStyle    // FaultStatus: body style
	RetryAfter    time.Duration // FaultStatus with 503: Retry-After header, rounded up to seconds
	TruncateAfter int           // FaultTruncate: body bytes sent before the connection drops

	// Independent of Mode and Times:
	Delay          time.Duration // before every allocation response; ends early if the client goes away
	MaxWindowHours int           // > 0: a window longer than this fails with 500, like an OOM-killed Kubecost
}

// withDefaults resolves sizes and defaults. It never mutates the caller's Config.
func (c Config) withDefaults() Config {
	if c.ClusterName == "" {
		c.ClusterName = "cluster-one"
	}
	if c.Flavor == "" {
		c.Flavor = FlavorKubecost
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.ContainersPerPod <= 0 {
		c.ContainersPerPod = 2
	}
	if c.ContainersPerHour > 0 {
		// Measured: HPA replicas on top of PodsPerNamespace outweigh idle job and
		// bare-pod slots (×1.1), and daemonsets add 5 containers per node of 12 pods.
		meanPerPod := float64(c.ContainersPerPod)
		if c.ContainersPerPod == 1 {
			meanPerPod = 1.25
		}
		slots := float64(c.ContainersPerHour) / (meanPerPod*1.1 + 5.0/12)
		ns := int(math.Round(math.Sqrt(slots) / 4))
		c.Namespaces = min(max(ns, 4), 400)
		c.PodsPerNamespace = max(1, int(math.Round(slots/float64(c.Namespaces))))
	}
	if c.Namespaces <= 0 {
		c.Namespaces = 6
	}
	if c.PodsPerNamespace <= 0 {
		c.PodsPerNamespace = 10
	}
	if c.Nodes <= 0 {
		c.Nodes = max(3, (c.Namespaces*c.PodsPerNamespace+11)/12)
	}
	c.Nodes = min(c.Nodes, 60000) // node IPs are unique up to here
	if c.RetentionDays <= 0 {
		c.RetentionDays = 30
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Quirks.OffsetTimes && c.Quirks.Location == nil {
		c.Quirks.Location = time.FixedZone("", -5*3600)
	}
	return c
}

// SanitizeLabelKey maps a Kubernetes label or annotation key to the key
// Kubecost reports: every character outside [a-zA-Z0-9_] becomes '_'.
func SanitizeLabelKey(k string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			return c
		}
		return '_'
	}, k)
}
