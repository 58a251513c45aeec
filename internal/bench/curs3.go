package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/bytecount"
)

// `kse-bench cur-s3` is the S3 half of .ci/bench-cur.sh: it starts MinIO,
// puts the synthetic month's CUR files (kse-bench cur-month) into a
// bucket, and runs `report -cur s3://...` for the days asked through a
// proxy that counts what the report GETs (internal/testkit/bytecount):
// object GETs, how many asked for a byte range, and the bytes sent, next
// to the export's size, and the report's wall time and peak RSS. It prints
// a markdown row.
func curS3Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kse-bench cur-s3", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".cache/bench-cur", "the month kse-bench cur-month wrote (archive/ and cur/)")
	minioBin := fs.String("minio", os.Getenv("MINIO_BIN"), "the minio server binary")
	exporterBin := fs.String("exporter", "bin/kubecost-s3-exporter", "the exporter binary")
	from := fs.String("from", "2026-10-24", "first day of the report")
	to := fs.String("to", "2026-10-30", "last day of the report")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *minioBin == "" {
		fmt.Fprintln(stderr, "kse-bench cur-s3: -minio (or MINIO_BIN) is required")
		return 2
	}
	row, err := curS3(context.Background(), *dir, *minioBin, *exporterBin, *from, *to)
	if err != nil {
		fmt.Fprintf(stderr, "kse-bench cur-s3: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, row)
	return 0
}

func curS3(ctx context.Context, dir, minioBin, exporterBin, from, to string) (string, error) {
	data, err := os.MkdirTemp("", "kse-bench-cur-s3-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(data)
	m, err := startMinIO(ctx, minioBin, data)
	if err != nil {
		return "", err
	}
	defer m.Stop()
	const bucket = "billing"
	if err := m.CreateBucket(ctx, bucket); err != nil {
		return "", err
	}
	files, size, err := putTree(ctx, m.client, bucket, filepath.Join(dir, "cur"), "cur/")
	if err != nil {
		return "", err
	}
	proxy, err := bytecount.Start(m.Endpoint)
	if err != nil {
		return "", err
	}
	defer proxy.Close()
	cmd := exec.CommandContext(ctx, exporterBin, "report", "-dir", filepath.Join(dir, "archive"), "-today", "2026-11-01",
		"-o", filepath.Join(dir, "report-s3.html"), "-cur", "s3://"+bucket+"/cur/", "-from", from, "-to", to)
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL_S3="+proxy.URL, "AWS_ACCESS_KEY_ID="+m.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+m.SecretKey, "AWS_REGION="+minioRegion, "AWS_EC2_METADATA_DISABLED=true")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("report: %w\n%s", err, errOut.String())
	}
	wall := time.Since(start)
	rss := 0.0 // MiB; Linux reports ru_maxrss in KiB
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = float64(ru.Maxrss) / 1024
	}
	bill := ""
	for line := range strings.SplitSeq(out.String(), "\n") {
		if strings.HasPrefix(line, "Kubecost and the bill") {
			bill = line
		}
	}
	gets, ranged, got := proxy.GETs.Load(), proxy.Ranged.Load(), proxy.Bytes.Load()
	return fmt.Sprintf("| -cur s3://, %s..%s | %d objects, %.1f MB | %d (%d ranged) | %.1f MB (%.1f%%) | %s | %.1f | %s |",
		from, to, files, float64(size)/1e6, gets, ranged, float64(got)/1e6, 100*float64(got)/float64(max(size, 1)),
		wall.Round(10*time.Millisecond), rss, bill), nil
}

// putTree uploads every file under root as prefix + its relative path.
func putTree(ctx context.Context, client *s3.Client, bucket, root, prefix string) (files int, size int64, err error) {
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		st, err := f.Stat()
		if err == nil {
			_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + filepath.ToSlash(rel)),
				Body: f, ContentLength: aws.Int64(st.Size())})
			files, size = files+1, size+st.Size()
		}
		return errors.Join(err, f.Close())
	})
	return files, size, err
}
