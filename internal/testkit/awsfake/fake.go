package awsfake

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Issuer mints the credentials handed out for an assumed role. The fake
// sets their Expiration itself, from its TTL.
type Issuer func(ctx context.Context, sessionName string, ttl time.Duration) (Credentials, error)

// StaticIssuer hands out fixed long-term keys with an empty session token,
// for example a MinIO user's. The SDK then signs without a security token,
// which MinIO requires for keys it did not issue through its own STS.
func StaticIssuer(accessKey, secretKey string) Issuer {
	return func(context.Context, string, time.Duration) (Credentials, error) {
		return Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}, nil
	}
}

// RandomIssuer hands out fresh random temporary credentials, for tests that
// never present them to MinIO.
func RandomIssuer() Issuer {
	return func(context.Context, string, time.Duration) (Credentials, error) {
		return newTempCredentials(time.Time{}), nil
	}
}

// Call records one request the fake received.
type Call struct {
	Service          string // "sts" or "secretsmanager"
	Action           string // AssumeRole, AssumeRoleWithWebIdentity, GetCallerIdentity, GetSecretValue
	AccessKeyID      string // who signed it; "" when unsigned
	Caller           string // the signer's assumed-role ARN, when known
	Region           string // the signing region from the credential scope
	RoleARN          string
	RoleSessionName  string
	DurationSeconds  int
	WebIdentityToken string
	SecretID         string
	IssuedKeyID      string // access key ID of credentials handed out
	ErrorCode        string // "" on success
	Time             time.Time
}

// Fake is a running pair of STS and Secrets Manager endpoints sharing one
// set of known credentials.
type Fake struct {
	STSURL     string
	SecretsURL string

	keys *keyring

	mu          sync.Mutex
	webIdentity map[string]map[string]bool // role ARN -> accepted tokens
	trust       map[string]map[string]Issuer
	ttl         time.Duration
	clock       func() time.Time // nil: time.Now
	calls       []Call
	secrets     map[string]*secret
}

// Start runs the fake on two loopback listeners and closes them in
// t.Cleanup.
func Start(t testing.TB) *Fake {
	t.Helper()
	f := &Fake{
		keys:        newKeyring(),
		webIdentity: map[string]map[string]bool{},
		trust:       map[string]map[string]Issuer{},
		secrets:     map[string]*secret{},
	}
	sts := httptest.NewServer(http.HandlerFunc(f.serveSTS))
	sm := httptest.NewServer(http.HandlerFunc(f.serveSecrets))
	t.Cleanup(sts.Close)
	t.Cleanup(sm.Close)
	f.STSURL, f.SecretsURL = sts.URL, sm.URL
	return f
}

// AllowWebIdentity lets AssumeRoleWithWebIdentity into roleARN succeed
// with any of tokens. Adding a token later models kubelet rotating the
// projected token file.
func (f *Fake) AllowWebIdentity(roleARN string, tokens ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.webIdentity[roleARN] == nil {
		f.webIdentity[roleARN] = map[string]bool{}
	}
	for _, tok := range tokens {
		f.webIdentity[roleARN][tok] = true
		f.keys.noteSecret(tok)
	}
}

// AllowAssumeRole makes target's trust policy admit callerRoleARN;
// issue mints the credentials. Any other AssumeRole is AccessDenied.
func (f *Fake) AllowAssumeRole(callerRoleARN, target string, issue Issuer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.trust[target] == nil {
		f.trust[target] = map[string]Issuer{}
	}
	f.trust[target][callerRoleARN] = issue
}

// SetTTL makes every credential issued from now on expire after d,
// whatever DurationSeconds asked for, so tests can cross an expiry in
// seconds. Zero restores the requested duration.
func (f *Fake) SetTTL(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ttl = d
}

// SetClock makes the fake read the time from now: the expiry it announces
// for new credentials and its expiry checks (STS, Secrets Manager, the S3
// gate) follow it, so tests cross an expiry by moving the clock instead of
// sleeping. nil restores the real clock.
func (f *Fake) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = now
}

func (f *Fake) now() time.Time {
	f.mu.Lock()
	clock := f.clock
	f.mu.Unlock()
	if clock == nil {
		return time.Now()
	}
	return clock()
}

// Calls returns every request received so far, in order.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// CallsTo returns the recorded calls of one action.
func (f *Fake) CallsTo(action string) []Call {
	var out []Call
	for _, c := range f.Calls() {
		if c.Action == action {
			out = append(out, c)
		}
	}
	return out
}

// Secrets returns every secret value the fake has issued or accepted:
// secret access keys, session tokens, web-identity tokens and the values
// of stored secrets. Tests scan logs for them.
func (f *Fake) Secrets() []string { return f.keys.allSecrets() }

// IssuedTo reports the role a given access key acts as, and whether the
// fake issued or learned it.
func (f *Fake) IssuedTo(accessKeyID string) (roleARN string, ok bool) {
	p, ok := f.keys.get(accessKeyID)
	if !ok {
		return "", false
	}
	return p.RoleARN, true
}

// Expired reports whether accessKeyID belongs to credentials the fake
// issued and whose expiry has passed.
func (f *Fake) Expired(accessKeyID string) bool {
	p, ok := f.keys.get(accessKeyID)
	return ok && !p.Expiration.IsZero() && !f.now().Before(p.Expiration)
}

func (f *Fake) record(c Call) {
	c.Time = f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

// authenticate checks a SigV4-signed request: a known access key, an
// unexpired credential, the matching session token and a correct
// signature. It returns the signer, or an AWS error code and message.
func (f *Fake) authenticate(r *http.Request, body []byte, c *Call) (*principal, string, string) {
	sig, err := parseSigV4(r.Header.Get("Authorization"))
	if err != nil {
		return nil, "MissingAuthenticationToken", "Request is missing Authentication Token: " + err.Error()
	}
	c.AccessKeyID, c.Region = sig.AccessKeyID, sig.Region
	p, ok := f.keys.get(sig.AccessKeyID)
	if !ok {
		return nil, "InvalidClientTokenId", "The security token included in the request is invalid."
	}
	c.Caller = p.AssumedARN
	if r.Header.Get("X-Amz-Security-Token") != p.SessionToken {
		return nil, "InvalidClientTokenId", "The security token included in the request is invalid."
	}
	if !p.Expiration.IsZero() && !f.now().Before(p.Expiration) {
		return nil, "ExpiredToken", "The security token included in the request is expired"
	}
	if err := sig.verify(r, body, p.SecretAccessKey); err != nil {
		return nil, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided: " + err.Error()
	}
	return p, "", ""
}

// readBody caps request bodies: nothing the exporter sends is large.
func readBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, 1<<20))
}

// ManualClock is a clock for SetClock that moves only when told to.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{t: start} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
