// Package kubetest runs a real, throw-away Kubernetes control plane for
// tests: etcd, kube-apiserver, kube-controller-manager (the Job, CronJob,
// TTL-after-finished and garbage-collector controllers) and kube-scheduler,
// all on loopback with a static admin token. There is no kubelet: pods are
// created, scheduled onto fake nodes and stay Pending until a test plays the
// kubelet's part (Cluster.FinishPod, Cluster.ForceDeletePod).
//
// The binaries come from $ETCD_BIN, $KUBE_APISERVER_BIN,
// $KUBE_CONTROLLER_MANAGER_BIN and $KUBE_SCHEDULER_BIN, else the cache filled
// by .ci/install-tools.sh, else $PATH. When one is missing the test is skipped
// locally but fails under CI, so CI can never go green by skipping.
package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/syncbuf"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// readyTimeout is generous: CI machines have two slow cores, and the API
// server bootstraps its RBAC roles and priority classes before it is ready.
const readyTimeout = 120 * time.Second

// Cluster is a running control plane owned by one test.
type Cluster struct {
	Server     string // https://127.0.0.1:PORT
	Token      string // bearer token of a system:masters user
	Kubeconfig string // kubeconfig file for helm and kubectl

	api   *client
	procs []*proc
}

type proc struct {
	name string
	cmd  *exec.Cmd
	log  *syncbuf.Buffer
	done chan struct{}
}

type binaries struct{ etcd, apiserver, controllerManager, scheduler string }

func findBinaries(t testing.TB) binaries {
	t.Helper()
	return binaries{
		etcd:              tooltest.Require(t, "etcd", "ETCD_BIN"),
		apiserver:         tooltest.Require(t, "kube-apiserver", "KUBE_APISERVER_BIN"),
		controllerManager: tooltest.Require(t, "kube-controller-manager", "KUBE_CONTROLLER_MANAGER_BIN"),
		scheduler:         tooltest.Require(t, "kube-scheduler", "KUBE_SCHEDULER_BIN"),
	}
}

// Start launches the control plane with its state in t.TempDir(), waits until
// the API server is ready and stops every process in t.Cleanup.
func Start(t testing.TB) *Cluster {
	t.Helper()
	bins := findBinaries(t)
	dir := t.TempDir()
	c := &Cluster{Token: randomHex(16)}
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			for _, p := range c.procs {
				t.Logf("--- %s log ---\n%s", p.name, tail(p.log.String(), 6<<10))
			}
		}
	})
	// Free ports are picked by listening and closing, so another process can
	// take one first: retry on a bind clash.
	for try := 0; ; try++ {
		err := c.start(t.Context(), bins, filepath.Join(dir, fmt.Sprint(try)))
		if err == nil {
			return c
		}
		if try == 2 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("kubetest: %v", err)
		}
		c.stop()
		c.procs = nil
	}
}

func (c *Cluster) start(ctx context.Context, bins binaries, dir string) error {
	etcdURL, err := c.startEtcd(ctx, bins.etcd, filepath.Join(dir, "etcd"))
	if err != nil {
		return err
	}
	if err := c.startAPIServer(ctx, bins.apiserver, filepath.Join(dir, "apiserver"), etcdURL); err != nil {
		return err
	}
	return c.startControllers(bins, dir)
}

func (c *Cluster) startEtcd(ctx context.Context, bin, dir string) (string, error) {
	client, peer := freePort(), freePort()
	if client == 0 || peer == 0 {
		return "", fmt.Errorf("no free port")
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	if err := c.launch("etcd", bin,
		"--name=kubetest",
		"--data-dir="+dir,
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=kubetest="+peerURL,
		"--unsafe-no-fsync", // throw-away data: no fsync keeps a slow disk fast
		"--log-level=warn",
	); err != nil {
		return "", err
	}
	return clientURL, c.waitFor(ctx, "etcd", func() error { return httpOK(clientURL + "/health") })
}

func (c *Cluster) startAPIServer(ctx context.Context, bin, dir, etcdURL string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	saKey := filepath.Join(dir, "sa.key")
	if err := writeRSAKey(saKey); err != nil {
		return err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(c.Token+`,kubetest-admin,kubetest-admin,"system:masters"`+"\n"), 0o600); err != nil {
		return err
	}
	port := freePort()
	if port == 0 {
		return fmt.Errorf("no free port")
	}
	c.Server = fmt.Sprintf("https://127.0.0.1:%d", port)
	certDir := filepath.Join(dir, "pki")
	if err := c.launch("kube-apiserver", bin,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir="+certDir, // a self-signed serving certificate is generated here
		"--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		// No node lifecycle controller runs to lift the not-ready taint this
		// plugin puts on new nodes; the fake nodes are Ready from the start.
		"--disable-admission-plugins=TaintNodesByCondition",
	); err != nil {
		return err
	}
	// The generated certificate file holds the serving certificate and the CA
	// that signed it, so it doubles as the client's CA bundle.
	caFile := filepath.Join(certDir, "apiserver.crt")
	if err := c.waitFor(ctx, "kube-apiserver", func() error {
		if _, err := os.Stat(caFile); err != nil {
			return err
		}
		api, err := newClient(c.Server, c.Token, caFile)
		if err != nil {
			return err
		}
		c.api = api
		return api.do(ctx, "GET", "/readyz", nil, nil)
	}); err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	return os.WriteFile(c.Kubeconfig, []byte(kubeconfig(c.Server, caFile, c.Token)), 0o600)
}

// startControllers runs the controllers the chart relies on: Jobs get pods,
// CronJobs get Jobs, finished Jobs expire, deleted owners lose their
// dependents, and pods are scheduled.
func (c *Cluster) startControllers(bins binaries, dir string) error {
	if err := c.launch("kube-controller-manager", bins.controllerManager,
		"--kubeconfig="+c.Kubeconfig,
		"--controllers=job-controller,cronjob-controller,ttl-after-finished-controller,garbage-collector-controller",
		"--leader-elect=false",
		"--secure-port=0",
		"--cert-dir="+filepath.Join(dir, "kcm"),
	); err != nil {
		return err
	}
	return c.launch("kube-scheduler", bins.scheduler,
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	)
}

func (c *Cluster) launch(name, bin string, args ...string) error {
	p := &proc{name: name, cmd: exec.Command(bin, args...), log: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	setProcAttrs(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	c.procs = append(c.procs, p)
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	return nil
}

// waitFor polls check until it succeeds, a process dies or readyTimeout ends.
func (c *Cluster) waitFor(ctx context.Context, what string, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		for _, p := range c.procs {
			select {
			case <-p.done:
				return fmt.Errorf("%s exited (%v) while waiting for %s\n%s", p.name, p.cmd.ProcessState, what, tail(p.log.String(), 4<<10))
			default:
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v (%w)", what, last, ctx.Err())
		case <-tick.C:
		}
	}
}

// stop stops the processes in reverse order (controllers before the API
// server before etcd): SIGTERM, then SIGKILL after a grace period.
func (c *Cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

func kubeconfig(server, caFile, token string) string {
	return strings.Join([]string{
		"apiVersion: v1",
		"kind: Config",
		"clusters:",
		"- name: kubetest",
		"  cluster:",
		"    server: " + server,
		"    certificate-authority: " + caFile,
		"users:",
		"- name: admin",
		"  user:",
		"    token: " + token,
		"contexts:",
		"- name: kubetest",
		"  context: {cluster: kubetest, user: admin}",
		"current-context: kubetest",
		"",
	}, "\n")
}

func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der := x509.MarshalPKCS1PrivateKey(key)
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), 0o600)
}

// freePort returns a loopback port that was free a moment ago, or 0.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
