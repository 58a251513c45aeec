package app

import (
	"errors"
	"slices"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// DayResult is what happened to one day of one cluster.
type DayResult struct {
	Cluster  string // the cluster's Cluster.ID
	Day      time.Time
	Key      string
	Reason   exporter.Reason
	Rows     int64
	Bytes    int64
	Duration time.Duration
	Lost     bool  // another run wrote the day first (a failed precondition)
	Err      error // why the day was not written
	// CleanupErr: the day was written (and counts so) but the file it replaces under another
	// codec could not be deleted; the next run removes it.
	CleanupErr error
}

// ClusterResult is what happened to one cluster of the run.
type ClusterResult struct {
	ID, ARN   string
	Plan      exporter.Plan
	Days      []DayResult // in day order
	PlanErr   error       // its available days are then failed days, which the next run retries
	Remaining []time.Time // planned days the budget left to the next run, oldest first
}

// Written counts the cluster's days uploaded by this run.
func (c ClusterResult) Written() (days int, rows, bytes int64) {
	for _, d := range c.Days {
		if d.Err == nil && !d.Lost {
			days++
			rows += d.Rows
			bytes += d.Bytes
		}
	}
	return days, rows, bytes
}

// Failed returns the cluster's days that could not be exported.
func (c ClusterResult) Failed() []DayResult {
	return slices.DeleteFunc(slices.Clone(c.Days), func(d DayResult) bool { return d.Err == nil })
}

// Summary is the outcome of a run; its fields are the run's last log line.
type Summary struct {
	Clusters []ClusterResult // in the order of Options.Clusters
	Unmapped []string        // ids Kubecost has days for that the run lacks: skipped, never misnamed
	Duration time.Duration
	Stop     string // which budget ended the run before every planned day started, or ""
}

func (s Summary) days() []DayResult {
	var out []DayResult
	for _, c := range s.Clusters {
		out = append(out, c.Days...)
	}
	return out
}

func (s Summary) perCluster(n func(ClusterResult) int) int {
	total := 0
	for _, c := range s.Clusters {
		total += n(c)
	}
	return total
}

// Available counts the days Kubecost offered, over every cluster.
func (s Summary) Available() int {
	return s.perCluster(func(c ClusterResult) int { return len(c.Plan.Available) })
}

// Planned counts the days planned for export, over every cluster.
func (s Summary) Planned() int {
	return s.perCluster(func(c ClusterResult) int { return len(c.Plan.Exports()) })
}

// Written counts the days uploaded by this run, over every cluster.
func (s Summary) Written() (days int, rows, bytes int64) {
	for _, c := range s.Clusters {
		d, r, b := c.Written()
		days, rows, bytes = days+d, rows+r, bytes+b
	}
	return days, rows, bytes
}

// Lost counts the days another run wrote first.
func (s Summary) Lost() int {
	n := 0
	for _, c := range s.Clusters {
		for _, d := range c.Days {
			if d.Lost {
				n++
			}
		}
	}
	return n
}

// CleanupsFailed counts the written days whose replaced file is still there.
func (s Summary) CleanupsFailed() int { return len(cleanupErrs(s.days())) }

// CleanupErrs are the cluster's failed deletes of replaced files, in day order.
func (c ClusterResult) CleanupErrs() []error { return cleanupErrs(c.Days) }

func cleanupErrs(days []DayResult) []error {
	var out []error
	for _, d := range days {
		if d.CleanupErr != nil {
			out = append(out, d.CleanupErr)
		}
	}
	return out
}

// Failed returns the days that failed, cluster by cluster.
func (s Summary) Failed() []DayResult {
	return slices.DeleteFunc(s.days(), func(d DayResult) bool { return d.Err == nil })
}

var (
	// ErrDaysFailed is returned when a day could not be exported; the next run retries it.
	ErrDaysFailed = errors.New("some days failed")
	// ErrCleanupFailed is returned when a replaced file could not be deleted: until the next
	// run removes it, queries see the day twice.
	ErrCleanupFailed = errors.New("replaced files could not be deleted")
	// ErrUnmappedClusters is returned with Options.FailOnUnmapped for unmapped clusters.
	ErrUnmappedClusters = errors.New("kubecost reports clusters that the cluster map lacks")
)

// Stopped reports whether Run's err stopped the run as a whole (Kubecost unreachable before
// planning, say) rather than summing up failed days, clean-ups or unmapped clusters, each
// already logged where it happened.
func Stopped(err error) bool {
	return err != nil && !errors.Is(err, ErrDaysFailed) && !errors.Is(err, ErrUnmappedClusters) && !errors.Is(err, ErrCleanupFailed)
}

// Planned reports whether a cluster whose part of the run ended with err got as far as a
// plan, rather than only the window (a run stopped before planning, or a denied listing).
func Planned(err error) bool {
	return err == nil || errors.Is(err, ErrDaysFailed) || errors.Is(err, ErrCleanupFailed)
}
