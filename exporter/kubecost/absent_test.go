package kubecost

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// An allocation that carries only its name, window and the aggregated
// properties (OpenCost 1.119 drops providerID, opencost/opencost#3538;
// any server may leave a field out) is exported with the contract's
// values for what is missing: "" for every string column, 0 for every
// number, and provider "" since there is no providerID to derive it from.
func TestAbsentFieldsAreEmpty(t *testing.T) {
	t.Parallel()
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		e := testDay.Add(24 * time.Hour)
		io.WriteString(w, `{"code":200,"status":"success","data":[{"c/n/ns/p/ctr":{"name":"c/n/ns/p/ctr",`+
			`"properties":{"cluster":"c","node":"n","namespace":"ns","pod":"p","container":"ctr"},`+
			fmt.Sprintf(`"window":{"start":%q,"end":%q}}}]}`, testDay.Format(time.RFC3339), e.Format(time.RFC3339)))
	})
	c, _ := newClient(t, srv.URL, func(o *Options) { o.Step, o.Flavor = 24*time.Hour, FlavorOpenCost })
	var sink memSink
	if err := c.FetchDay(context.Background(), testDay, &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.rows) != 1 {
		t.Fatalf("%d rows, want 1", len(sink.rows))
	}
	r := sink.rows[0]
	want := map[int]string{
		schema.PropCluster: "c", schema.PropNode: "n", schema.PropNamespace: "ns", schema.PropPod: "p", schema.PropContainer: "ctr",
		schema.PropClusterID: "arn:aws:eks:us-east-1:111122223333:cluster/one", schema.PropEKSClusterName: "one",
	}
	for i := range schema.NumProps {
		if got := r.Props[i]; got != want[i] {
			t.Errorf("properties.%s = %q, want %q", schema.PropName(i), got, want[i])
		}
	}
	for i, v := range r.Num {
		if v != 0 {
			t.Errorf("number %d = %v, want 0", i, v)
		}
	}
	for i, v := range append(append([]string{}, r.Labels...), r.Annotations...) {
		if v != "" {
			t.Errorf("label or annotation %d = %q, want \"\"", i, v)
		}
	}
	if r.Start != testDay.UnixMilli() || r.End != testDay.Add(24*time.Hour).UnixMilli() {
		t.Errorf("window %d,%d", r.Start, r.End)
	}
}
