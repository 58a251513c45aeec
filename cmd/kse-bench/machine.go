package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
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

// busy reports whether a load average string's 1-minute figure exceeds
// half the CPUs: other work was competing with the benchmark.
func busy(load string, cpus int) bool {
	f := strings.Fields(load)
	if len(f) == 0 {
		return false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return err == nil && v > float64(cpus)/2
}
