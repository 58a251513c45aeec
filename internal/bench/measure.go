package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Measurement is what one run of a command cost.
type Measurement struct {
	Wall time.Duration
	// MaxRSS is the peak resident set size in bytes, from the rusage that
	// wait4(2) returns for the child: the measurement of record.
	MaxRSS    int64
	User, Sys time.Duration
	ExitCode  int
	// TimeV is the report of /usr/bin/time -v when it wrapped the command,
	// and TimeVRSS its "Maximum resident set size" in bytes; both are empty
	// when /usr/bin/time is not installed.
	TimeV    string
	TimeVRSS int64
}

// CPU is user plus system time.
func (m Measurement) CPU() time.Duration { return m.User + m.Sys }

// Runner runs a command and measures it. Wall time and peak RSS come from
// Go (os/exec and the child's rusage), so they work wherever Go does;
// /usr/bin/time -v, when TimeBin names it, also wraps the command as a
// cross-check whose report is kept next to the numbers.
type Runner struct {
	TimeBin string // "" to run the command directly
}

// DefaultTimeBin returns "/usr/bin/time" when it is GNU time, else "".
func DefaultTimeBin() string {
	const p = "/usr/bin/time"
	if _, err := exec.LookPath(p); err != nil {
		return ""
	}
	// BusyBox and BSD time lack -v or -o; probe with a trivial command.
	if err := exec.Command(p, "-v", "-o", os.DevNull, "true").Run(); err != nil {
		return ""
	}
	return p
}

// Run starts argv with env, sends its stdout and stderr to logPath, and
// waits. A non-zero exit is reported in ExitCode, not as an error; the
// error is for failing to run it at all.
func (r Runner) Run(ctx context.Context, argv, env []string, logPath string) (Measurement, error) {
	var m Measurement
	log, err := os.Create(logPath)
	if err != nil {
		return m, err
	}
	defer log.Close()
	var timeOut string
	if r.TimeBin != "" {
		timeOut = logPath + ".time"
		argv = append([]string{r.TimeBin, "-v", "-o", timeOut}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return m, err
	}
	werr := cmd.Wait()
	m.Wall = time.Since(start)
	var exit *exec.ExitError
	if werr != nil && !errors.As(werr, &exit) {
		return m, werr
	}
	ps := cmd.ProcessState
	m.ExitCode = ps.ExitCode()
	m.User, m.Sys = ps.UserTime(), ps.SystemTime()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		m.MaxRSS = maxRSSBytes(int64(ru.Maxrss))
	}
	if timeOut != "" {
		b, err := os.ReadFile(timeOut)
		if err != nil {
			return m, fmt.Errorf("read /usr/bin/time report: %w", err)
		}
		m.TimeV = string(b)
		m.TimeVRSS, _ = ParseTimeV(m.TimeV)
		// /usr/bin/time exits with the child's status, or 128+signal.
	}
	return m, nil
}

// maxRSSBytes converts ru_maxrss, which Linux reports in KiB and macOS in bytes.
func maxRSSBytes(v int64) int64 {
	if runtime.GOOS == "darwin" {
		return v
	}
	return v * 1024
}

// ParseTimeV returns the peak RSS in bytes from GNU time -v output.
func ParseTimeV(s string) (int64, error) {
	const key = "Maximum resident set size (kbytes):"
	for line := range strings.Lines(s) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("time -v: bad %q: %w", line, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("time -v: no maximum resident set size line")
}

// TimeVBrief keeps the lines of a time -v report worth printing per run.
func TimeVBrief(s string) string {
	keep := []string{"Elapsed (wall clock)", "Maximum resident set size", "User time", "System time",
		"Percent of CPU", "Major (requiring I/O) page faults", "Exit status"}
	var out []string
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		for _, k := range keep {
			if strings.HasPrefix(line, k) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, "; ")
}

// tailFile returns about the last n bytes of a file, for error messages.
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// findFiles lists regular files under dir whose names end in suffix.
func findFiles(dir, suffix string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), suffix) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
