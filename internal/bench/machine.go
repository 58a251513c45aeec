package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Machine describes where the benchmark ran.
type Machine struct {
	CPUs      int
	CPUModel  string
	MemTotal  string
	Kernel    string
	OS        string
	GoVersion string // of the toolchain that built the bench, which builds the exporter too
	Arch      string
}

// DescribeMachine reads /proc and /etc/os-release; fields it cannot read
// stay "unknown".
func DescribeMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Arch: runtime.GOOS + "/" + runtime.GOARCH,
		CPUModel: "unknown", MemTotal: "unknown", Kernel: "unknown", OS: "unknown"}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPUModel = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		if kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64); err == nil {
			m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if v := procField("/etc/os-release", "PRETTY_NAME"); v != "" {
		m.OS = strings.Trim(v, `"`)
	}
	return m
}

// procField returns the value of the first "key: value" or "key=value"
// line of a /proc-style file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			k, v, ok = strings.Cut(line, "=")
		}
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// String is the one-paragraph description the report prints.
func (m Machine) String() string {
	return fmt.Sprintf("%d CPUs (`nproc`), %s; %s RAM; %s, kernel %s, %s; %s",
		m.CPUs, m.CPUModel, m.MemTotal, m.OS, m.Kernel, m.Arch, m.GoVersion)
}

// loadAvg returns the 1, 5 and 15 minute load averages, "" if unknown.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// cpuSample is the machine's busy CPU time (from /proc/stat) and this
// process's plus its waited-for children's CPU time, at one instant.
type cpuSample struct {
	at         time.Time
	busy, ours time.Duration
	ok         bool
}

func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(b), "\n") // "cpu  user nice system idle ..."
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return s
	}
	f = f[1:]
	var ticks int64
	for i, v := range f[:8] { // user nice system idle iowait irq softirq steal
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s
		}
		ticks += n
	}
	const userHZ = 100 // sysconf(_SC_CLK_TCK) on every Linux platform Go supports
	s.busy = time.Duration(ticks) * time.Second / userHZ
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return s
	}
	s.ours = time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
	s.ok = true
	return s
}

// otherCPU is the share of the machine's CPU capacity that processes
// other than the bench and the exporters it ran used between a and b.
func otherCPU(a, b cpuSample, cpus int) (float64, bool) {
	if !a.ok || !b.ok || cpus < 1 {
		return 0, false
	}
	capacity := b.at.Sub(a.at).Seconds() * float64(cpus)
	other := (b.busy - a.busy - (b.ours - a.ours)).Seconds()
	if capacity <= 0 {
		return 0, false
	}
	return max(other, 0) / capacity, true
}
