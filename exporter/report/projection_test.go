package report_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/report"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// countingStore is a directory store whose files count the bytes read.
type countingStore struct {
	exporter.ObjectStore
	read, size *atomic.Int64
}

type countingFile struct {
	*os.File
	read *atomic.Int64
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.read.Add(int64(n))
	return n, err
}

func (f countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.read.Add(int64(n))
	return n, err
}

func (f countingFile) Stat() (fs.FileInfo, error) { return f.File.Stat() }

func (s countingStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, err := s.ObjectStore.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	f := rc.(*os.File)
	st, _ := f.Stat()
	s.size.Add(st.Size())
	return countingFile{f, s.read}, nil
}

// TestReadsOnlyNeededColumns: the report reads a fraction of each file,
// because it decodes only the columns it draws.
func TestReadsOnlyNeededColumns(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	sim := kubecostsim.NewServer(kubecostsim.Config{Seed: 3, RetentionDays: 4, Now: func() time.Time { return now }})
	t.Cleanup(sim.Close)
	dir := t.TempDir()
	env := map[string]string{"OUTPUT_DIR": dir, "CLUSTER_ID": "arn:aws:eks:us-east-1:111122223333:cluster/prod",
		"KUBECOST_API_ENDPOINT": sim.URL, "GRANULARITY": "hourly", "LABELS": "app", "LOG_FORMAT": "json"}
	var logs bytes.Buffer
	if code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		&logs, cli.Hooks{Now: func() time.Time { return now }}); code != cli.ExitOK {
		t.Fatalf("export: exit %d\n%s", code, logs.String())
	}
	ds, err := dirstore.New(dir, dirstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := countingStore{ds, &atomic.Int64{}, &atomic.Int64{}}
	d, err := report.Collect(context.Background(), report.Options{Store: st, Today: now})
	if err != nil {
		t.Fatal(err)
	}
	if d.Files == 0 || d.Rows == 0 {
		t.Fatalf("read %d files, %d rows", d.Files, d.Rows)
	}
	read, size := st.read.Load(), st.size.Load()
	t.Logf("%d files, %d rows: read %d of %d bytes (%.0f%%)", d.Files, d.Rows, read, size, 100*float64(read)/float64(size))
	if read == 0 || read > size/2 {
		t.Errorf("read %d of %d bytes: more than half of the files for 8 of their %d+ columns", read, size, 60)
	}
}
