package awsauth

import (
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/syncbuf"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/awsfake"
)

const (
	childARN  = "arn:aws:iam::111111111111:role/kubecost-s3-exporter-irsa"
	parentARN = "arn:aws:iam::222222222222:role/pipeline/kubecost-s3-exporter-writer"
	cluster   = "prod"
	region    = "us-east-1"
)

// env is a private environment handed to Load through Input.Lookup, so the
// tests run in parallel without touching the process environment.
type env map[string]string

func (e env) lookup(k string) (string, bool) {
	v, ok := e[k]
	return v, ok
}

// newLogger captures JSON logs, as the exporter writes them in a pod.
func newLogger(t *testing.T) (*slog.Logger, *syncbuf.Buffer) {
	t.Helper()
	buf := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("captured logs:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// irsa is a fake AWS in which the pod's web identity may become the child
// role, and an environment shaped like the one EKS injects.
type irsa struct {
	fake      *awsfake.Fake
	env       env
	tokenFile string
	token     string
}

func newIRSA(t *testing.T) *irsa {
	t.Helper()
	f := awsfake.Start(t)
	tok := "eyJhbGciOiJSUzI1NiJ9.projected-sa-token." + t.Name()
	f.AllowWebIdentity(childARN, tok)
	file := filepath.Join(t.TempDir(), "token")
	writeFile(t, file, tok)
	return &irsa{
		fake:      f,
		tokenFile: file,
		token:     tok,
		env: env{
			"AWS_ROLE_ARN":                     childARN,
			"AWS_WEB_IDENTITY_TOKEN_FILE":      file,
			"AWS_ENDPOINT_URL_STS":             f.STSURL,
			"AWS_ENDPOINT_URL_SECRETS_MANAGER": f.SecretsURL,
		},
	}
}

func (s *irsa) input(log *slog.Logger, parent string) Input {
	return Input{Region: region, ParentRoleARN: parent, ParentRoleSetting: "IRSA_PARENT_IAM_ROLE_ARN", ClusterName: cluster, Lookup: s.env.lookup, Logger: log, RequestTimeout: time.Minute}
}

// secrets is everything that must never be logged: every secret key,
// session token and web-identity token the fake saw, and every access
// key ID it issued or received (not secret to AWS, but we log none).
func (s *irsa) secrets(extra ...string) []string {
	out := append(s.fake.Secrets(), extra...)
	for _, c := range s.fake.Calls() {
		out = append(out, c.AccessKeyID, c.IssuedKeyID)
	}
	return out
}

// assertNoSecrets scans captured logs line by line.
func assertNoSecrets(t *testing.T, logs string, secrets []string) {
	t.Helper()
	if strings.TrimSpace(logs) == "" {
		t.Fatal("no logs captured: the scan would prove nothing")
	}
	n := 0
	for _, s := range secrets {
		if len(s) < 8 { // "" and short fixtures would match by accident
			continue
		}
		n++
		for i, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, s) {
				t.Errorf("log line %d leaks a secret (%d chars): %s", i+1, len(s), strings.ReplaceAll(line, s, "<LEAKED>"))
			}
		}
	}
	if n == 0 {
		t.Fatal("no secrets to scan for")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
