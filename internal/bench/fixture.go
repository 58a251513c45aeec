package bench

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// Size is one benchmark size: about Target allocations in an hourly day at
// container level.
type Size struct {
	Name              string
	Target            int
	ContainersPerHour int
}

// allocationsPerContainerHour: an hourly day has 24 sets of about
// ContainersPerHour allocations each (plus idle rows).
const allocationsPerContainerHour = 24

// ParseSizes parses a comma list like "24k,120k,1M".
func ParseSizes(s string) ([]Size, error) {
	var out []Size
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		mult := 1.0
		num := f
		switch {
		case strings.HasSuffix(f, "k"), strings.HasSuffix(f, "K"):
			mult, num = 1e3, f[:len(f)-1]
		case strings.HasSuffix(f, "M"), strings.HasSuffix(f, "m"):
			mult, num = 1e6, f[:len(f)-1]
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v <= 0 || v*mult < allocationsPerContainerHour || v*mult > 5e6 {
			return nil, fmt.Errorf("bad size %q: want allocations per day like 24k, 120k or 1M (24 to 5M)", f)
		}
		target := int(math.Round(v * mult))
		out = append(out, Size{Name: f, Target: target,
			ContainersPerHour: int(math.Round(float64(target) / allocationsPerContainerHour))})
	}
	if len(out) == 0 {
		return nil, errors.New("no sizes")
	}
	return out, nil
}

// Day is one pre-rendered day response, served to the exporter as a file copy.
type Day struct {
	Day         time.Time
	Query       url.Values // exactly what the exporter sends for this day
	File        string
	Bytes       int64
	Sets        int
	Allocations int64
}

// DayQuery is the request the exporter makes for one day with
// GRANULARITY=hourly, AGGREGATION=container and no pagination.
func DayQuery(day time.Time) url.Values {
	end := day.Add(24 * time.Hour)
	return url.Values{
		"window":            {day.UTC().Format(time.RFC3339) + "," + end.UTC().Format(time.RFC3339)},
		"aggregate":         {"cluster,node,namespace,pod,container"},
		"step":              {"1h"},
		"accumulate":        {"false"},
		"idle":              {"true"},
		"splitIdle":         {"true"},
		"idleByNode":        {"true"},
		"shareTenancyCosts": {"true"},
	}
}

// simConfig is the simulated cluster of one size. Now is the real clock:
// the exporter plans its days from the real clock too.
func simConfig(seed int64, cph, retentionDays int) kubecostsim.Config {
	return kubecostsim.Config{Seed: seed, ContainersPerHour: cph, RetentionDays: retentionDays}
}

// fingerprint identifies what the simulator renders for cfg: a hash of a
// small probe response (which changes when the generator or the JSON
// changes) and of the resolved cluster size. Cached files carry it in their
// names, so a simulator change never serves stale bodies.
func fingerprint(cfg kubecostsim.Config) (string, error) {
	probeDay := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	probe := kubecostsim.New(kubecostsim.Config{Seed: cfg.Seed, ContainersPerHour: 20,
		Now: func() time.Time { return probeDay.Add(5 * 24 * time.Hour) }})
	h := sha256.New()
	if err := probe.WriteResponse(h, DayQuery(probeDay)); err != nil {
		return "", fmt.Errorf("probe render: %w", err)
	}
	c := kubecostsim.New(cfg).Config()
	fmt.Fprintf(h, "|%d|%s|%s|%d|%d|%d|%d", c.Seed, c.ClusterName, c.Region, c.Namespaces,
		c.PodsPerNamespace, c.ContainersPerPod, c.Nodes)
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

type fixtureMeta struct {
	Query       string `json:"query"`
	Bytes       int64  `json:"bytes"`
	Sets        int    `json:"sets"`
	Allocations int64  `json:"allocations"`
	RenderSecs  string `json:"render_seconds"`
}

// prepareDay renders the day's response into dir (once; later runs reuse
// the file) and counts its allocations.
func prepareDay(ctx context.Context, sim *kubecostsim.Sim, dir, name string, day time.Time, logf func(string, ...any)) (Day, error) {
	q := DayQuery(day)
	d := Day{Day: day, Query: q, File: filepath.Join(dir, name+".json")}
	metaPath := d.File + ".meta"
	var meta fixtureMeta
	if b, err := os.ReadFile(metaPath); err == nil && json.Unmarshal(b, &meta) == nil && meta.Query == q.Encode() {
		if fi, err := os.Stat(d.File); err == nil && fi.Size() == meta.Bytes {
			d.Bytes, d.Sets, d.Allocations = meta.Bytes, meta.Sets, meta.Allocations
			logf("reusing %s (%.0f MB, %d allocations)", d.File, mb(d.Bytes), d.Allocations)
			return d, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return d, err
	}
	logf("rendering %s for %s (once; later runs reuse it)", d.File, day.Format(time.DateOnly))
	start := time.Now()
	if err := renderFile(ctx, sim, q, d.File); err != nil {
		return d, err
	}
	elapsed := time.Since(start)
	sets, n, err := countAllocations(d.File)
	if err != nil {
		os.Remove(d.File)
		return d, fmt.Errorf("check rendered %s: %w", d.File, err)
	}
	fi, err := os.Stat(d.File)
	if err != nil {
		return d, err
	}
	d.Bytes, d.Sets, d.Allocations = fi.Size(), sets, n
	meta = fixtureMeta{Query: q.Encode(), Bytes: d.Bytes, Sets: sets, Allocations: n,
		RenderSecs: fmt.Sprintf("%.1f", elapsed.Seconds())}
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := os.WriteFile(metaPath, append(b, '\n'), 0o644); err != nil {
		return d, err
	}
	logf("rendered %.0f MB, %d sets, %d allocations in %s", mb(d.Bytes), sets, n, elapsed.Round(time.Millisecond))
	return d, nil
}

// renderFile writes the response to a temp file and renames it into place,
// so an interrupted render never leaves a short body in the cache.
func renderFile(ctx context.Context, sim *kubecostsim.Sim, q url.Values, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".render-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	err = sim.WriteResponseContext(ctx, bw, q)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}

// countAllocations validates the body and counts its non-null sets and
// allocations: the objects at /data/<i> and /data/<i>/<name>.
func countAllocations(path string) (sets int, allocs int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	dec := jsontext.NewDecoder(f, floorOptions()...)
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return sets, allocs, nil
		}
		if err != nil {
			return sets, allocs, err
		}
		if tok.Kind() != '{' {
			continue
		}
		switch dec.StackDepth() {
		case 3, 4:
			if !strings.HasPrefix(string(dec.StackPointer()), "/data/") {
				continue
			}
			if dec.StackDepth() == 3 {
				sets++
			} else {
				allocs++
			}
		}
	}
}

// fixtureName names a rendered day in the cache.
func fixtureName(day time.Time, cph int, fp string) string {
	return fmt.Sprintf("day-%s-cph%d-%s", day.Format(time.DateOnly), cph, fp)
}

// pruneCache removes rendered days that can never be served again: days
// before oldest (the exporter plans from the real clock) and, for the
// sizes of this run, files of another simulator fingerprint. A 1M day is
// 2.4 GB.
func pruneCache(dir string, oldest time.Time, fps map[int]string, logf func(string, ...any)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		base := strings.TrimSuffix(strings.TrimSuffix(n, ".meta"), ".json")
		var cph int
		var fp string
		rest, ok := strings.CutPrefix(base, "day-")
		if !ok || len(rest) < len("2006-01-02-") {
			continue
		}
		day, err := time.Parse(time.DateOnly, rest[:10])
		if err != nil {
			continue
		}
		if _, err := fmt.Sscanf(rest[11:], "cph%d-%s", &cph, &fp); err != nil {
			continue
		}
		stale := day.Before(oldest)
		if want, ok := fps[cph]; ok && want != fp {
			stale = true
		}
		if !stale {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err == nil && strings.HasSuffix(n, ".json") {
			logf("pruned stale %s", n)
		}
	}
}

func mb(b int64) float64 { return float64(b) / 1e6 }
