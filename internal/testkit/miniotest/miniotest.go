// Package miniotest runs a real, throw-away MinIO server for tests, so S3
// code paths (listing, uploads, multipart aborts, IAM denials) are exercised
// against a genuine S3 implementation rather than a mock.
//
// The binary comes from $MINIO_BIN, else the cache filled by
// .ci/install-tools.sh, else $PATH. When it is missing the test is skipped
// locally but fails under CI, so CI can never go green by skipping.
package miniotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/minio/madmin-go/v3"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/syncbuf"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// Region is the region MinIO reports by default; clients must sign with it.
const Region = "us-east-1"

const (
	startTimeout = 60 * time.Second // generous: CI machines have 2 slow cores
	stopTimeout  = 10 * time.Second
	startTries   = 3 // free-port picking is racy; retry on a bind clash
)

// Server is a running MinIO instance owned by one test.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string // root user
	SecretKey string // root password
	Region    string

	host string // 127.0.0.1:PORT, what madmin wants
	cmd  *exec.Cmd
	log  *syncbuf.Buffer
	done chan struct{} // closed when the process exits
}

// Start launches MinIO on random loopback ports with data in t.TempDir(),
// waits until it is live and stops it in t.Cleanup.
func Start(t tooltest.TB) *Server {
	t.Helper()
	bin, err := FindBinary(os.Getenv)
	if err != nil {
		// An explicit MINIO_BIN that is wrong is a setup bug, never a skip.
		if os.Getenv("CI") != "" || os.Getenv("MINIO_BIN") != "" {
			t.Fatalf("miniotest: %v (CI must not skip S3 tests; run make tools)", err)
		}
		t.Skipf("minio not installed: run make tools")
	}

	s, err := Launch(t.Context(), bin, t.TempDir())
	if err != nil {
		t.Fatalf("miniotest: %v", err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("--- minio log (%s) ---\n%s", s.Endpoint, tail(s.log.String(), 8<<10))
		}
	})
	return s
}

// Launch starts MinIO from bin on random loopback ports with its data under
// dir and waits until it is live. The caller must Stop it. Start is Launch
// for tests; the benchmark uses Launch directly.
func Launch(ctx context.Context, bin, dir string) (*Server, error) {
	var err error
	for try := range startTries {
		var s *Server
		var portClash bool
		if s, portClash, err = launch(ctx, bin, filepath.Join(dir, fmt.Sprint(try))); err == nil {
			return s, nil
		}
		if !portClash {
			break
		}
	}
	return nil, err
}

// launch starts one MinIO process; portClash reports that another process
// took one of the picked ports first, which is worth a retry.
func launch(ctx context.Context, bin, dir string) (s *Server, portClash bool, err error) {
	port, err := freePort()
	if err != nil {
		return nil, false, err
	}
	consolePort, err := freePort()
	if err != nil {
		return nil, false, err
	}
	dataDir := filepath.Join(dir, "data")
	// A private certs dir stops MinIO from picking up ~/.minio/certs and
	// silently switching to TLS.
	certsDir := filepath.Join(dir, "certs")
	for _, d := range []string{dataDir, certsDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, false, err
		}
	}

	host := fmt.Sprintf("127.0.0.1:%d", port)
	s = &Server{
		Endpoint:  "http://" + host,
		AccessKey: "root" + randomHex(8),
		SecretKey: randomHex(20),
		Region:    Region,
		host:      host,
		log:       &syncbuf.Buffer{},
		done:      make(chan struct{}),
	}

	cmd := exec.Command(bin, "server", "--quiet",
		"--address", host,
		"--console-address", fmt.Sprintf("127.0.0.1:%d", consolePort),
		"--certs-dir", certsDir,
		dataDir)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_REGION="+Region,
		"MINIO_BROWSER=off", // no console: faster start, fewer ports
		"MINIO_UPDATE=off",  // never phone home
		"MINIO_CI_CD=1",     // small buffer pool; tmp dirs may sit on the root drive
		"MINIO_CALLHOME_ENABLE=off",
	)
	cmd.Stdout = s.log
	cmd.Stderr = s.log
	setProcAttrs(cmd)
	if err := cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("start %s: %w", bin, err)
	}
	s.cmd = cmd
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()

	if err := s.waitLive(ctx); err != nil {
		s.Stop()
		out := s.log.String()
		clash := strings.Contains(out, "address already in use")
		return nil, clash, fmt.Errorf("%w\n--- minio log ---\n%s", err, out)
	}
	return s, false, nil
}

// waitLive polls the liveness probe until it answers 200, the process dies,
// or the bounded context expires.
func (s *Server) waitLive(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	url := s.Endpoint + "/minio/health/live"
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("minio exited before becoming live (%v)", s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("minio not live at %s: %w", url, ctx.Err())
		case <-tick.C:
		}
	}
}

// Stop asks MinIO to shut down cleanly and kills it if it lingers, so a
// stuck server never outlives its owner.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Log returns everything the server has printed so far.
func (s *Server) Log() string { return s.log.String() }

// S3Client returns a root-credentialed, path-style S3 client.
func (s *Server) S3Client(t tooltest.TB) *s3.Client {
	t.Helper()
	return s.S3ClientAs(t, s.AccessKey, s.SecretKey)
}

// S3ClientAs returns a path-style S3 client signing as the given user,
// for checking what a least-privilege policy allows.
func (s *Server) S3ClientAs(t tooltest.TB, accessKey, secretKey string) *s3.Client {
	t.Helper()
	return s3.New(s3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
	})
}

// CreateBucket creates a bucket as root and fails the test on error.
func (s *Server) CreateBucket(t tooltest.TB, name string) {
	t.Helper()
	_, err := s.S3Client(t).CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		t.Fatalf("miniotest: create bucket %q: %v", name, err)
	}
}

// AddUser creates a MinIO user and, when policyJSON is non-empty, attaches
// it as a canned policy named after the user. MinIO evaluates these
// policies like IAM identity policies, which is what our docs hand to users.
func (s *Server) AddUser(t tooltest.TB, accessKey, secretKey, policyJSON string) {
	t.Helper()
	ctx := t.Context()
	adm, err := madmin.NewWithOptions(s.host, &madmin.Options{
		Creds: miniocreds.NewStaticV4(s.AccessKey, s.SecretKey, ""),
	})
	if err != nil {
		t.Fatalf("miniotest: admin client: %v", err)
	}
	if err := adm.AddUser(ctx, accessKey, secretKey); err != nil {
		t.Fatalf("miniotest: add user %q: %v", accessKey, err)
	}
	if policyJSON == "" {
		return
	}
	policy := "policy-" + accessKey
	if err := adm.AddCannedPolicy(ctx, policy, []byte(policyJSON)); err != nil {
		t.Fatalf("miniotest: add policy for %q: %v", accessKey, err)
	}
	if _, err := adm.AttachPolicy(ctx, madmin.PolicyAssociationReq{
		Policies: []string{policy},
		User:     accessKey,
	}); err != nil {
		t.Fatalf("miniotest: attach policy to %q: %v", accessKey, err)
	}
}

// FindBinary locates minio: $MINIO_BIN (must exist if set), then the newest
// version in the install-tools.sh cache, then $PATH.
func FindBinary(getenv func(string) string) (string, error) {
	return tooltest.Find(getenv, "minio", "MINIO_BIN")
}

// freePort asks the kernel for an unused loopback port. Another process may
// grab it before MinIO binds; Start retries when that happens.
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
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
