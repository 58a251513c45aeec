package awsauth

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/awsfake"
)

func TestSessionName(t *testing.T) {
	valid := regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	long := strings.Repeat("a", 100)
	for _, tc := range []struct{ cluster, want string }{
		{"prod", "kubecost-s3-exporter-prod"},
		{"eu_prod-2", "kubecost-s3-exporter-eu_prod-2"},
		{"", "kubecost-s3-exporter"},
		{"a b/c:d", "kubecost-s3-exporter-a-b-c-d"},
		{strings.Repeat("x", 43), "kubecost-s3-exporter-" + strings.Repeat("x", 43)}, // exactly 64
		{long, "kubecost-s3-exporter-" + strings.Repeat("a", 34) + "-" + shortHash(long)},
	} {
		got := SessionName(tc.cluster)
		if got != tc.want {
			t.Errorf("SessionName(%q) = %q, want %q", tc.cluster, got, tc.want)
		}
		if !valid.MatchString(got) {
			t.Errorf("SessionName(%q) = %q is not a valid STS session name", tc.cluster, got)
		}
	}
	// Long names sharing a 43-character prefix must stay distinguishable.
	if a, b := SessionName(long+"-eu"), SessionName(long+"-us"); a == b {
		t.Errorf("long cluster names collide: %q", a)
	}
}

// The IRSA chain: the token is read from the file, the child assumes the
// parent with its own signed credentials, and the resulting Config signs
// as the parent.
func TestLoadChainsWebIdentityToParent(t *testing.T) {
	t.Parallel()
	s := newIRSA(t)
	s.fake.AllowAssumeRole(childARN, parentARN, awsfake.RandomIssuer())
	log, logs := newLogger(t)

	id, err := Load(t.Context(), s.input(log, parentARN))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	wantChain := "web-identity " + childARN + " -> assume-role " + parentARN
	if id.Chain != wantChain {
		t.Errorf("Chain = %q, want %q", id.Chain, wantChain)
	}
	wantCaller := "arn:aws:sts::222222222222:assumed-role/kubecost-s3-exporter-writer/kubecost-s3-exporter-prod"
	if id.CallerARN != wantCaller || id.Account != "222222222222" {
		t.Errorf("caller = %q in %q, want %q in 222222222222", id.CallerARN, id.Account, wantCaller)
	}
	if id.Config.Region != region {
		t.Errorf("region %q, want %s", id.Config.Region, region)
	}

	web := s.fake.CallsTo("AssumeRoleWithWebIdentity")
	assume := s.fake.CallsTo("AssumeRole")
	who := s.fake.CallsTo("GetCallerIdentity")
	if len(web) != 1 || len(assume) != 1 || len(who) != 1 {
		t.Fatalf("calls: %d web identity, %d assume role, %d get caller identity; want 1 each", len(web), len(assume), len(who))
	}
	w, a := web[0], assume[0]
	if w.ErrorCode != "" || w.RoleARN != childARN || w.WebIdentityToken != s.token || w.AccessKeyID != "" {
		t.Errorf("AssumeRoleWithWebIdentity = %+v; want unsigned, role %s, the token from the file", w, childARN)
	}
	if w.RoleSessionName != "kubecost-s3-exporter-prod" || a.RoleSessionName != "kubecost-s3-exporter-prod" {
		t.Errorf("session names %q, %q; want kubecost-s3-exporter-prod", w.RoleSessionName, a.RoleSessionName)
	}
	// Signed (and signature-verified by the fake) with the child's key.
	if a.ErrorCode != "" || a.RoleARN != parentARN || a.AccessKeyID != w.IssuedKeyID || a.Region != region {
		t.Errorf("AssumeRole = %+v; want role %s signed by the child key %s in %s", a, parentARN, w.IssuedKeyID, region)
	}
	if a.DurationSeconds != 3600 {
		t.Errorf("AssumeRole DurationSeconds = %d, want 3600 (the role-chaining maximum)", a.DurationSeconds)
	}
	if who[0].AccessKeyID != a.IssuedKeyID {
		t.Errorf("GetCallerIdentity signed by %s, want the parent key %s", who[0].AccessKeyID, a.IssuedKeyID)
	}
	creds, err := id.Config.Credentials.Retrieve(t.Context())
	if err != nil || creds.AccessKeyID != a.IssuedKeyID {
		t.Errorf("Config credentials = %s, %v; want the parent's %s", creds.AccessKeyID, err, a.IssuedKeyID)
	}
	if n := len(s.fake.CallsTo("AssumeRole")); n != 1 {
		t.Errorf("cached credentials were fetched again: %d AssumeRole calls", n)
	}

	for _, want := range []string{`"msg":"aws credentials ready"`, `"chain":"` + wantChain + `"`, `"step":"assume-role"`, `"caller":"` + wantCaller + `"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs miss %s", want)
		}
	}
	assertNoSecrets(t, logs.String(), s.secrets())
}

func TestLoadWebIdentityOnly(t *testing.T) {
	t.Parallel()
	s := newIRSA(t)
	log, logs := newLogger(t)
	s.env["AWS_ROLE_SESSION_NAME"] = "custom-session"
	// The input's region is the one: which of -region, AWS_REGION and
	// the cluster's wins is the destination's decision (Settings.Region).
	s.env["AWS_REGION"], s.env["AWS_DEFAULT_REGION"] = "eu-west-1", "eu-west-2"

	id, err := Load(t.Context(), s.input(log, ""))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if id.Chain != "web-identity "+childARN {
		t.Errorf("Chain = %q", id.Chain)
	}
	if id.CallerARN != "arn:aws:sts::111111111111:assumed-role/kubecost-s3-exporter-irsa/custom-session" {
		t.Errorf("CallerARN = %q", id.CallerARN)
	}
	if id.Config.Region != region {
		t.Errorf("region = %q, want the input's %s, not AWS_REGION's", id.Config.Region, region)
	}
	if n := len(s.fake.CallsTo("AssumeRole")); n != 0 {
		t.Errorf("%d AssumeRole calls without a parent role", n)
	}
	assertNoSecrets(t, logs.String(), s.secrets())
}

// A parent role that does not trust the child: Load fails at once, with
// the role, the chain and STS's reason, and without retrying AccessDenied.
func TestLoadParentRoleDenied(t *testing.T) {
	t.Parallel()
	s := newIRSA(t)
	other := "arn:aws:iam::111111111111:role/someone-else"
	s.fake.AllowAssumeRole(other, parentARN, awsfake.RandomIssuer())
	log, logs := newLogger(t)

	_, err := Load(t.Context(), s.input(log, parentARN))
	if err == nil {
		t.Fatal("Load succeeded, want an AssumeRole failure")
	}
	msg := err.Error()
	for _, want := range []string{
		"awsauth: cannot assume parent role " + parentARN + " (IRSA_PARENT_IAM_ROLE_ARN)",
		"with web-identity " + childARN,
		"AccessDenied",
		"is not authorized to perform: sts:AssumeRole on resource: " + parentARN,
		"trust policy",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error misses %q:\n%s", want, msg)
		}
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDenied" {
		t.Errorf("error does not unwrap to the STS AccessDenied: %v", err)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	if n := len(s.fake.CallsTo("AssumeRole")); n != 1 {
		t.Errorf("AssumeRole called %d times; AccessDenied must not be retried", n)
	}
	t.Logf("error shown to the user: %v", err)
	// Nothing was logged as "ready", and the failure itself is the caller's
	// to log once; the child's issue event is fine.
	if strings.Contains(logs.String(), "aws credentials ready") {
		t.Error("logged ready despite failing")
	}
	assertNoSecrets(t, logs.String()+msg, s.secrets())
}

func TestLoadWebIdentityFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(*irsa)
		want  []string
	}{
		{"token not accepted", func(s *irsa) { writeFile(t, s.tokenFile, "a-token-nobody-issued") },
			[]string{"awsauth: web identity " + childARN, "InvalidIdentityToken"}},
		{"token file missing", func(s *irsa) { s.env["AWS_WEB_IDENTITY_TOKEN_FILE"] = s.tokenFile + ".missing" },
			[]string{"awsauth: web identity " + childARN, "no such file"}},
		{"role not trusted", func(s *irsa) { s.env["AWS_ROLE_ARN"] = "arn:aws:iam::111111111111:role/unknown" },
			[]string{"awsauth: web identity arn:aws:iam::111111111111:role/unknown", "AccessDenied"}},
		{"half IRSA", func(s *irsa) { delete(s.env, "AWS_WEB_IDENTITY_TOKEN_FILE") },
			[]string{"AWS_ROLE_ARN=", "AWS_WEB_IDENTITY_TOKEN_FILE=\"\" must be set together"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newIRSA(t)
			tc.setup(s)
			log, logs := newLogger(t)
			_, err := Load(t.Context(), s.input(log, parentARN))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error misses %q: %v", w, err)
				}
			}
			if n := len(s.fake.CallsTo("AssumeRole")); n != 0 {
				t.Errorf("AssumeRole attempted %d times after the web identity failed", n)
			}
			if !strings.Contains(err.Error(), s.token) {
				assertNoSecrets(t, logs.String()+"\n"+err.Error(), s.secrets())
			} else {
				t.Errorf("error contains the web identity token")
			}
		})
	}
}

func TestLoadNeedsRegion(t *testing.T) {
	t.Parallel()
	_, err := Load(t.Context(), Input{Lookup: env{}.lookup})
	if err == nil || !strings.Contains(err.Error(), "no AWS region") {
		t.Fatalf("err = %v, want a missing-region error", err)
	}
}

func TestEndpointsFollowLookup(t *testing.T) {
	t.Parallel()
	e := envSource{env{
		"AWS_ENDPOINT_URL_S3":              "http://127.0.0.1:9000",
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://127.0.0.1:9001",
	}.lookup}
	for sdkID, want := range map[string]string{"S3": "http://127.0.0.1:9000", "Secrets Manager": "http://127.0.0.1:9001", "STS": ""} {
		got, found, _ := e.GetServiceBaseEndpoint(t.Context(), sdkID)
		if got != want || found != (want != "") {
			t.Errorf("%s endpoint = %q, %v; want %q", sdkID, got, found, want)
		}
	}
	ignored := envSource{env{"AWS_ENDPOINT_URL_S3": "http://x", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}.lookup}
	if got, found, _ := ignored.GetServiceBaseEndpoint(t.Context(), "S3"); found {
		t.Errorf("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true still yields %q", got)
	}
}
