package exporter

import (
	"strconv"
	"testing"
)

// A day total is a sum of thousands of float64 costs, whose noise showed
// in logs and object metadata (78.29131000000001). Rounded and formatted,
// it prints the decimal total, and parses back to the very value the
// drift check compares.
func TestRoundTotalPrintsNoNoise(t *testing.T) {
	tenth := make([]float64, 10)
	for i := range tenth {
		tenth[i] = 0.1
	}
	for _, tc := range []struct {
		costs []float64
		want  string
		noisy bool // the raw sum prints with noise: the case tests something
	}{
		{[]float64{50.2, 28.09131}, "78.29131", true},
		{[]float64{0.1, 0.2}, "0.3", true},
		{tenth, "1", true},
		{[]float64{-0.1, -0.2}, "-0.3", true},
		{[]float64{1234567.25, 0.25}, "1234567.5", false}, // 'g' printed 1.2345675e+06
		{[]float64{0.0000004}, "0", true},                 // below a millionth
		{nil, "0", false},
	} {
		var raw float64
		for _, c := range tc.costs {
			raw += c
		}
		if noisy := strconv.FormatFloat(raw, 'f', -1, 64) != tc.want; noisy != tc.noisy {
			t.Errorf("%v: raw sum %v, noisy=%v, want %v", tc.costs, raw, noisy, tc.noisy)
		}
		v := RoundTotal(raw)
		got := FormatTotal(v)
		if got != tc.want {
			t.Errorf("FormatTotal(RoundTotal(%v)) = %q, want %q", raw, got, tc.want)
		}
		if back, err := strconv.ParseFloat(got, 64); err != nil || back != v {
			t.Errorf("%q parses back to %v (%v), want %v exactly", got, back, err, v)
		}
	}
}
