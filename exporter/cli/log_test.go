package cli

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestJSONLogDurations: a duration in a JSON log line reads as "7.2s", not
// as the nanoseconds slog's JSON handler would print.
func TestJSONLogDurations(t *testing.T) {
	var b bytes.Buffer
	log := newLogger(&b, "json", "info")
	log.Info("retry", "delay", 7236304895*time.Nanosecond, "short", 1234567*time.Nanosecond,
		"long", 150*time.Second+400*time.Millisecond, "tiny", 1500*time.Nanosecond)
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	for k, want := range map[string]string{"delay": "7.2s", "short": "1ms", "long": "2m30s", "tiny": "2µs"} {
		if got[k] != want {
			t.Errorf("%s = %#v, want %q (line %s)", k, got[k], want, b.String())
		}
	}
}
