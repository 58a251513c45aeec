// Package awsfake runs loopback stand-ins for the AWS services the exporter
// calls besides S3: STS (query protocol, XML responses) and Secrets Manager
// (JSON 1.1 protocol). They speak the real wire protocols, so the exporter
// is tested through the genuine AWS SDK clients, pointed at them with
// AWS_ENDPOINT_URL_STS and AWS_ENDPOINT_URL_SECRETS_MANAGER.
//
// Requests signed with SigV4 are verified against the secret of the access
// key that signed them, so a test can prove which identity made each call
// (for example: AssumeRole signed by the web-identity child, S3 and Secrets
// Manager signed by the assumed parent).
package awsfake

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Credentials are what STS hands out. An empty SessionToken marks long-term
// keys: the SDK then sends no X-Amz-Security-Token header at all.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	Expiration      time.Time
}

// principal is an identity the fake knows the secret of, so it can check
// signatures made with it.
type principal struct {
	Credentials
	RoleARN     string // the IAM role these credentials act as
	AssumedARN  string // arn:<p>:sts::<acct>:assumed-role/<name>/<session>
	Account     string
	SessionName string
}

// keyring maps access key IDs to the principals they belong to. STS fills
// it; every signed request is checked against it.
type keyring struct {
	mu   sync.Mutex
	keys map[string]*principal
	// secrets holds every credential secret, session token and web-identity
	// token the fake has seen, for log scans.
	secrets []string
}

func newKeyring() *keyring { return &keyring{keys: map[string]*principal{}} }

func (k *keyring) add(p *principal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys[p.AccessKeyID] = p
	k.secrets = append(k.secrets, p.SecretAccessKey)
	if p.SessionToken != "" {
		k.secrets = append(k.secrets, p.SessionToken)
	}
}

func (k *keyring) noteSecret(s string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.secrets = append(k.secrets, s)
}

func (k *keyring) get(accessKey string) (*principal, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p, ok := k.keys[accessKey]
	return p, ok
}

func (k *keyring) allSecrets() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.secrets...)
}

const upperAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// newTempCredentials returns fresh random credentials shaped like STS's:
// an ASIA access key ID, a 40-character secret and a long session token.
func newTempCredentials(expires time.Time) Credentials {
	return Credentials{
		AccessKeyID:     "ASIA" + randomFrom(upperAlnum, 16),
		SecretAccessKey: randomB64(30),
		SessionToken:    "FwoGZXIvYXdzE" + randomB64(180),
		Expiration:      expires.UTC().Truncate(time.Second),
	}
}

func randomFrom(alphabet string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func randomB64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	// URL alphabet without padding: nothing a form or XML encoder mangles.
	return base64.RawURLEncoding.EncodeToString(b)
}

func requestID() string {
	h := randomFrom("0123456789abcdef", 32)
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[:8], h[8:12], h[12:16], h[16:20], h[20:])
}

// roleParts splits arn:<partition>:iam::<account>:role/[path/]<name>.
func roleParts(arn string) (partition, account, name string, ok bool) {
	f := strings.SplitN(arn, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[2] != "iam" || !strings.HasPrefix(f[5], "role/") {
		return "", "", "", false
	}
	res := f[5]
	return f[1], f[4], res[strings.LastIndexByte(res, '/')+1:], true
}
