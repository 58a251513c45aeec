package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// minioRegion is the region MinIO reports by default; clients sign with it.
const minioRegion = "us-east-1"

// minio is a throw-away MinIO server on a random loopback port.
type minio struct {
	Endpoint, AccessKey, SecretKey string

	cmd    *exec.Cmd
	done   chan struct{}
	log    *lockedBuffer
	client *s3.Client
}

// startMinIO launches bin with its data under dir and waits until it is live.
func startMinIO(ctx context.Context, bin, dir string) (*minio, error) {
	var lastErr error
	for range 3 { // a free port can be taken before MinIO binds it
		m, err := launchMinIO(ctx, bin, dir)
		if err == nil {
			return m, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launchMinIO(ctx context.Context, bin, dir string) (*minio, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	consolePort, err := freePort()
	if err != nil {
		return nil, err
	}
	data, certs := filepath.Join(dir, "data"), filepath.Join(dir, "certs")
	for _, d := range []string{data, certs} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	m := &minio{Endpoint: "http://" + host, AccessKey: "bench" + randomHex(6), SecretKey: randomHex(20),
		done: make(chan struct{}), log: &lockedBuffer{}}
	m.cmd = exec.Command(bin, "server", "--quiet", "--address", host,
		"--console-address", "127.0.0.1:"+strconv.Itoa(consolePort), "--certs-dir", certs, data)
	m.cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+m.AccessKey, "MINIO_ROOT_PASSWORD="+m.SecretKey,
		"MINIO_REGION="+minioRegion, "MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1",
		"MINIO_CALLHOME_ENABLE=off")
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	setDeathSignal(m.cmd)
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { m.cmd.Wait(); close(m.done) }()
	if err := m.waitLive(ctx); err != nil {
		m.Stop()
		return nil, fmt.Errorf("%w\n--- minio log ---\n%s", err, m.log.String())
	}
	m.client = s3.New(s3.Options{Region: minioRegion, BaseEndpoint: aws.String(m.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(m.AccessKey, m.SecretKey, "")})
	return m, nil
}

func (m *minio) waitLive(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.Endpoint+"/minio/health/live", nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-m.done:
			return errors.New("minio exited before becoming live")
		case <-ctx.Done():
			return fmt.Errorf("minio not live at %s: %w", m.Endpoint, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop shuts MinIO down, killing it if it lingers.
func (m *minio) Stop() {
	if m.cmd.Process == nil {
		return
	}
	m.cmd.Process.Signal(os.Interrupt)
	select {
	case <-m.done:
	case <-time.After(10 * time.Second):
		m.cmd.Process.Kill()
		<-m.done
	}
}

// Env is the exporter's S3 configuration for bucket on this server.
func (m *minio) Env(bucket string) []string {
	return []string{
		"S3_BUCKET_NAME=" + bucket,
		"AWS_ENDPOINT_URL_S3=" + m.Endpoint,
		"AWS_ACCESS_KEY_ID=" + m.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + m.SecretKey,
		"AWS_REGION=" + minioRegion,
		"AWS_EC2_METADATA_DISABLED=true",
		// S3_EXPECTED_BUCKET_OWNER stays at its default (the cluster's
		// account): MinIO accepts the header, so the production path runs.
	}
}

func (m *minio) CreateBucket(ctx context.Context, bucket string) error {
	_, err := m.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	return err
}

// object is one stored object and the row count the exporter put in its metadata.
type object struct {
	Key  string
	Size int64
	Rows int64
}

// Objects lists the bucket with each object's "rows" metadata.
func (m *minio) Objects(ctx context.Context, bucket string) ([]object, error) {
	var out []object
	p := s3.NewListObjectsV2Paginator(m.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			h, err := m.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				return nil, err
			}
			rows, _ := strconv.ParseInt(h.Metadata["rows"], 10, 64)
			out = append(out, object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), Rows: rows})
		}
	}
	return out, nil
}

// Empty deletes every object, so the next run finds its days missing again.
func (m *minio) Empty(ctx context.Context, bucket string) error {
	objs, err := m.Objects(ctx, bucket)
	if err != nil || len(objs) == 0 {
		return err
	}
	ids := make([]types.ObjectIdentifier, len(objs))
	for i, o := range objs {
		ids[i] = types.ObjectIdentifier{Key: aws.String(o.Key)}
	}
	_, err = m.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket),
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// lockedBuffer collects a child's output, written from two goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
