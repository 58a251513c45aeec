package kubecost

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The largest annotation Kubernetes allows (256 KiB for all of a pod's
// annotations, so one value of a little less), with every byte written as
// a \uXXXX escape, which JSON allows: 1.5 MiB on the wire. With the
// default MAX_VALUE_BYTES it is read whole, not refused as a runaway
// value; a value just over the default still fails the day.
func TestEscapedAnnotationFitsDefault(t *testing.T) {
	t.Parallel()
	const n = 256<<10 - len("owner")
	escaped := strings.Repeat(`\u0061`, n)
	if len(escaped) <= 1<<20 {
		t.Fatalf("the escaped value is %d bytes: no larger than the old default", len(escaped))
	}
	body := func(value string) string {
		return fmt.Sprintf(`{"code":200,"data":[{"c/n/ns/p/ctr":{"name":"c/n/ns/p/ctr","properties":{"cluster":"c","node":"n",`+
			`"namespace":"ns","pod":"p","container":"ctr","annotations":{"owner":"%s"}},"window":{"start":%q,"end":%q},"totalCost":1}}]}`,
			value, testDay.Format(time.RFC3339), testDay.Add(24*time.Hour).Format(time.RFC3339))
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body(escaped)) })
	c, _ := newClient(t, srv.URL, func(o *Options) { o.Step = 24 * time.Hour })
	var sink memSink
	if err := c.FetchDay(context.Background(), testDay, &sink); err != nil {
		t.Fatal(err)
	}
	p := testProjection()
	if got := sink.rows[0].Annotations[p.AnnotationSlot("owner")]; got != strings.Repeat("a", n) {
		t.Errorf("annotation of %d bytes, want %d a's", len(got), n)
	}

	over := serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body(strings.Repeat("a", DefaultMaxValueBytes+1)))
	})
	c, _ = newClient(t, over.URL, func(o *Options) { o.Step = 24 * time.Hour })
	if err := c.FetchDay(context.Background(), testDay, &memSink{}); err == nil || !strings.Contains(err.Error(), "MAX_VALUE_BYTES") {
		t.Errorf("a value over the default: err = %v, want MAX_VALUE_BYTES named", err)
	}
}
