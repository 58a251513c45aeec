package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The targets on a 2-core machine.
const (
	TargetRSS        = 150 << 20 // peak RSS at every size (and per concurrent day)
	TargetRSSGrowth  = 1.3       // peak RSS at 1M within this factor of peak RSS at 24k
	TargetFloorRatio = 2.5       // wall time within this factor of the tokenize floor at 120k and 1M
)

// The sizes the targets name, in allocations per day.
const (
	small  = 24_000
	medium = 120_000
	large  = 1_000_000
)

// otherCPUNoisy is the share of the machine's CPU used by other processes
// above which the report warns that wall times are unreliable.
const otherCPUNoisy = 0.10

// Check is one target for one sink.
type Check struct {
	Target string
	Sink   string
	// Measured is false when the run did not include the sizes the target
	// needs; such a check neither passes nor fails.
	Measured bool
	Pass     bool
	Detail   string
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func fmtDurations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return strings.Join(parts, "/") + " s"
}

// Wall is the median wall time of the scenario's runs.
func (sc *Scenario) Wall() time.Duration {
	ds := make([]time.Duration, len(sc.Runs))
	for i, r := range sc.Runs {
		ds[i] = r.M.Wall
	}
	return median(ds)
}

// CPU is the median user+system time of the runs.
func (sc *Scenario) CPU() time.Duration {
	ds := make([]time.Duration, len(sc.Runs))
	for i, r := range sc.Runs {
		ds[i] = r.M.CPU()
	}
	return median(ds)
}

// PeakRSS is the largest peak RSS over the runs.
func (sc *Scenario) PeakRSS() int64 {
	var m int64
	for _, r := range sc.Runs {
		m = max(m, r.M.MaxRSS)
	}
	return m
}

// Bytes and Allocations are the JSON the scenario's days hold together.
func (sc *Scenario) Bytes() (n int64) {
	for _, d := range sc.Days {
		n += d.Bytes
	}
	return n
}

func (sc *Scenario) Allocations() (n int64) {
	for _, d := range sc.Days {
		n += d.Allocations
	}
	return n
}

func (sc *Scenario) ok() bool { return sc.Err == nil && len(sc.Runs) > 0 }

func (r *Report) size(target int) *SizeResult {
	for i := range r.Sizes {
		if r.Sizes[i].Size.Target == target {
			return &r.Sizes[i]
		}
	}
	return nil
}

func (r *Report) scenario(target int, sink string, concurrency int) *Scenario {
	for _, sc := range r.Scenarios {
		if sc.Size.Target == target && sc.Sink == sink && sc.Concurrency == concurrency && len(sc.Days) == 1 {
			return sc
		}
	}
	return nil
}

func (r *Report) sinks() []string {
	var out []string
	for _, sc := range r.Scenarios {
		if !slices.Contains(out, sc.Sink) {
			out = append(out, sc.Sink)
		}
	}
	return out
}

func (r *Report) floorRatio(sc *Scenario) float64 {
	sr := r.size(sc.Size.Target)
	if sr == nil || len(sc.Days) != 1 {
		return 0
	}
	return sc.Wall().Seconds() / median(sr.Floor).Seconds()
}

// Checks evaluates the targets for each sink. A failed scenario
// counts as a miss: it measured nothing.
func (r *Report) Checks() []Check {
	var out []Check
	for _, sink := range r.sinks() {
		// 1. Peak RSS <= 150 MiB at every size.
		c := Check{Target: fmt.Sprintf("peak RSS ≤ %d MiB at every size", TargetRSS>>20), Sink: sink, Pass: true}
		var parts []string
		for _, sc := range r.Scenarios {
			if sc.Sink != sink || len(sc.Days) != 1 {
				continue
			}
			c.Measured = true
			if !sc.ok() {
				c.Pass = false
				parts = append(parts, sc.Size.Name+": failed")
				continue
			}
			parts = append(parts, fmt.Sprintf("%s: %.1f", sc.Size.Name, mib(sc.PeakRSS())))
			c.Pass = c.Pass && sc.PeakRSS() <= TargetRSS
		}
		c.Detail = strings.Join(parts, ", ") + " MiB"
		out = append(out, c)

		// 2. Peak RSS at 1M within 1.3x of 24k.
		c = Check{Target: fmt.Sprintf("peak RSS at 1M ≤ %.1f× peak RSS at 24k", TargetRSSGrowth), Sink: sink}
		a, b := r.scenario(small, sink, 1), r.scenario(large, sink, 1)
		if a != nil && b != nil {
			c.Measured = true
			if a.ok() && b.ok() {
				g := float64(b.PeakRSS()) / float64(a.PeakRSS())
				c.Pass = g <= TargetRSSGrowth
				c.Detail = fmt.Sprintf("%.2f× (%.1f / %.1f MiB)", g, mib(b.PeakRSS()), mib(a.PeakRSS()))
			} else {
				c.Detail = "a run failed"
			}
		} else {
			c.Detail = "needs the 24k and 1M sizes"
		}
		out = append(out, c)

		// 3. Wall time within 2.5x of the floor at 120k and 1M.
		for _, t := range []struct {
			target int
			name   string
		}{{medium, "120k"}, {large, "1M"}} {
			c = Check{Target: fmt.Sprintf("wall ≤ %.1f× tokenize floor at %s", TargetFloorRatio, t.name), Sink: sink}
			if sc := r.scenario(t.target, sink, 1); sc != nil {
				c.Measured = true
				if sc.ok() {
					ratio := r.floorRatio(sc)
					c.Pass = ratio <= TargetFloorRatio
					c.Detail = fmt.Sprintf("%.2f× (%.2f s / %.2f s)", ratio, sc.Wall().Seconds(), median(r.size(t.target).Floor).Seconds())
				} else {
					c.Detail = "run failed"
				}
			} else {
				c.Detail = "needs the " + t.name + " size"
			}
			out = append(out, c)
		}
	}
	// 5. Bounded concurrency: peak memory per concurrent day within the target.
	for _, sc := range r.Scenarios {
		if len(sc.Days) < 2 {
			continue
		}
		c := Check{Target: fmt.Sprintf("CONCURRENCY=%d, %d days of %s: peak RSS ≤ %d MiB per concurrent day",
			sc.Concurrency, len(sc.Days), sc.Size.Name, TargetRSS>>20), Sink: sc.Sink, Measured: true}
		if sc.ok() {
			per := float64(sc.PeakRSS()) / float64(sc.Concurrency)
			c.Pass = per <= TargetRSS
			c.Detail = fmt.Sprintf("%.1f MiB per day (%.1f MiB peak)", per/(1<<20), mib(sc.PeakRSS()))
		} else {
			c.Detail = "run failed"
		}
		out = append(out, c)
	}
	return append(out, r.fleetChecks()...)
}

// Missed reports whether a measured target was missed.
func (r *Report) Missed() bool {
	for _, c := range r.Checks() {
		if c.Measured && !c.Pass {
			return true
		}
	}
	return false
}

// Markdown renders the results: the main table, the targets, the
// concurrency runs and every run's numbers.
func (r *Report) Markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("Measured %s UTC in %s", r.Started.UTC().Format("2006-01-02 15:04"), r.Elapsed.Round(time.Second))
	if r.Rev != "" {
		p(" at %s", r.Rev)
	}
	p("; %d run(s) per cell (median wall time, largest peak RSS).\n\n", r.Runs)
	p("Machine: %s.\n\n", r.Machine)
	if r.LoadBefore != "" {
		p("Load average (1/5/15 min) at the start: %s. ", r.LoadBefore)
	}
	if r.OtherCPUKnown {
		p("Other processes used %.0f%% of the machine's CPU during the bench.", 100*r.OtherCPU)
		if r.OtherCPU > otherCPUNoisy {
			p(" **That competes with the exporter for the cores: wall times are noisy; rerun on an idle machine.**")
		}
	}
	p("\n\n")

	p("| sink | size | allocations | JSON MB | wall s | allocations/s | JSON MB/s | peak RSS MiB | CPU s | floor s | wall/floor | rows written | Parquet MB |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, sc := range r.Scenarios {
		if len(sc.Days) != 1 {
			continue
		}
		sr := r.size(sc.Size.Target)
		floor := median(sr.Floor).Seconds()
		if !sc.ok() {
			p("| %s | %s | %d | %.0f | failed | | | | | %.2f | | | |\n", sc.Sink, sc.Size.Name, sc.Allocations(), mb(sc.Bytes()), floor)
			continue
		}
		wall := sc.Wall().Seconds()
		last := sc.Runs[len(sc.Runs)-1]
		p("| %s | %s | %d | %.0f | %.2f | %.0f | %.0f | %.1f | %.2f | %.2f | %.2f | %d%s | %.1f |\n",
			sc.Sink, sc.Size.Name, sc.Allocations(), mb(sc.Bytes()), wall, float64(sc.Allocations())/wall,
			mb(sc.Bytes())/wall, mib(sc.PeakRSS()), sc.CPU().Seconds(), floor, wall/floor,
			last.Rows, rowsMark(last.Rows, sc.Allocations()), mb(last.OutBytes))
	}
	p("\nfloor: %s\n\n", floorLine(r))

	p("Targets:\n\n| target | sink | result | measured |\n|---|---|---|---|\n")
	for _, c := range r.Checks() {
		res := "n/a"
		if c.Measured {
			res = map[bool]string{true: "**PASS**", false: "**MISS**"}[c.Pass]
		}
		p("| %s | %s | %s | %s |\n", c.Target, c.Sink, res, c.Detail)
	}

	var conc []*Scenario
	for _, sc := range r.Scenarios {
		if len(sc.Days) > 1 {
			conc = append(conc, sc)
		}
	}
	if len(conc) > 0 {
		p("\nSeveral missing days (bounded concurrency):\n\n")
		p("| sink | size | days | CONCURRENCY | wall s | allocations/s | peak RSS MiB | peak RSS per concurrent day MiB | CPU s |\n")
		p("|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, sc := range conc {
			if !sc.ok() {
				p("| %s | %s | %d | %d | failed | | | | |\n", sc.Sink, sc.Size.Name, len(sc.Days), sc.Concurrency)
				continue
			}
			wall := sc.Wall().Seconds()
			p("| %s | %s | %d | %d | %.2f | %.0f | %.1f | %.1f | %.2f |\n", sc.Sink, sc.Size.Name, len(sc.Days),
				sc.Concurrency, wall, float64(sc.Allocations())/wall, mib(sc.PeakRSS()),
				mib(sc.PeakRSS())/float64(sc.Concurrency), sc.CPU().Seconds())
		}
	}

	p("%s", r.fleetMarkdown())

	p("\nEvery run (wall s / peak RSS MiB / exporter CPU s / simulator CPU s; the simulator serves from this process and shares the cores):\n\n")
	for _, sc := range r.Scenarios {
		var parts []string
		for _, run := range sc.Runs {
			s := fmt.Sprintf("%.2f / %.1f / %.2f / %.2f", run.M.Wall.Seconds(), mib(run.M.MaxRSS), run.M.CPU().Seconds(), run.ServerCPU.Seconds())
			if run.M.TimeVRSS > 0 {
				s += fmt.Sprintf(" (time -v: %.1f MiB)", mib(run.M.TimeVRSS))
			}
			parts = append(parts, s)
		}
		if sc.Err != nil {
			parts = append(parts, "FAILED: "+firstLine(sc.Err.Error()))
		}
		p("- %s %s, %d day(s), CONCURRENCY=%d: %s\n", sc.Size.Name, sc.Sink, len(sc.Days), sc.Concurrency, strings.Join(parts, "; "))
	}
	return b.String()
}

func floorLine(r *Report) string {
	var parts []string
	for _, s := range r.Sizes {
		m := median(s.Floor)
		parts = append(parts, fmt.Sprintf("%s %s (median %.2f s, %.0f MB/s, CPU %.2f s, %d tokens)", s.Size.Name,
			fmtDurations(s.Floor), m.Seconds(), mb(s.Day.Bytes)/m.Seconds(), median(s.FloorCPU).Seconds(), s.Tokens))
	}
	return strings.Join(parts, "; ")
}

func rowsMark(rows, want int64) string {
	if rows == want {
		return ""
	}
	return fmt.Sprintf(" (≠ %d in the JSON)", want)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
