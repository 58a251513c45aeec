package cli

import (
	"io"
	"log/slog"
	"os"
	"strings"
)

// newLogger returns the run's logger: JSON in a pod (one event per line for
// log shippers), text on a terminal, unless LOG_FORMAT says otherwise.
func newLogger(w io.Writer, format, level string) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level))
	if format == "auto" || format == "" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	opts := &slog.HandlerOptions{Level: lvl}
	if strings.EqualFold(format, "text") {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
