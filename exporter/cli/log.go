package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// newLogger returns the run's logger: JSON in a pod (one event per line for log shippers),
// text on a terminal, unless LOG_FORMAT says otherwise.
func newLogger(w io.Writer, format, level string) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level))
	if format == "auto" || format == "" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: redactAttr}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if strings.EqualFold(format, "text") {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(redactHandler{h})
}

// redactHandler strips credentials from every URL in a log line (message, string and error
// values), whether from our attributes, net/http's errors or the AWS SDK's logger: the one
// place all output passes through keeps "credentials never appear" true for later code.
type redactHandler struct{ slog.Handler }

func (h redactHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Message = exporter.Redact(r.Message)
	return h.Handler.Handle(ctx, r)
}

func (h redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	for i := range as {
		as[i] = redactAttr(nil, as[i])
	}
	return redactHandler{h.Handler.WithAttrs(as)}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h.Handler.WithGroup(name)}
}

// redactAttr is the handlers' ReplaceAttr: it sees every attribute, also inside groups.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindDuration:
		a.Value = slog.StringValue(readableDuration(v.Duration()))
	case slog.KindString:
		a.Value = slog.StringValue(exporter.Redact(v.String()))
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			a.Value = slog.StringValue(exporter.Redact(x.Error()))
		case []string:
			out := make([]string, len(x))
			for i, s := range x {
				out[i] = exporter.Redact(s)
			}
			a.Value = slog.AnyValue(out)
		default:
			if st, ok := x.(interface{ String() string }); ok {
				a.Value = slog.StringValue(exporter.Redact(st.String()))
			}
		}
	}
	return a
}

// readableDuration prints d as a person reads it ("7.2s", "350ms"), to the precision that
// matters at its size, not slog JSON's nanoseconds (7236304895).
func readableDuration(d time.Duration) string {
	switch a := d.Abs(); {
	case a >= time.Minute:
		return d.Round(time.Second).String()
	case a >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	case a >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
