// Package awsauth builds the AWS configuration every S3 and Secrets
// Manager call of the exporter uses, and fetches the secrets that reach
// Kubecost (CA bundle, bearer token).
//
// In production the pod runs with IRSA: EKS injects AWS_ROLE_ARN and
// AWS_WEB_IDENTITY_TOKEN_FILE, and the web-identity role (the child) is the
// pod's identity. When the bucket lives in a central account,
// IRSA_PARENT_IAM_ROLE_ARN names a role there (the parent); the child
// assumes it, and everything after that uses the parent's credentials:
//
//	web-identity arn:aws:iam::111111111111:role/child -> assume-role arn:aws:iam::222222222222:role/parent
//
// Both steps are cached and refreshed ExpiryWindow before they expire, so a
// backfill that runs for hours never sends an expired credential. The web
// identity token file is re-read at every refresh because kubelet rotates it.
package awsauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

const (
	// DefaultExpiryWindow is how long before expiry cached credentials are
	// refreshed: far more than any single S3 upload or retry sequence.
	DefaultExpiryWindow = 5 * time.Minute
	// DefaultSessionDuration is the parent session length. Role chaining
	// caps sessions at one hour, and every role allows at least one hour,
	// so asking for exactly that never fails and keeps STS calls rare.
	DefaultSessionDuration = time.Hour
	// identityCheckTimeout bounds the start-up GetCallerIdentity call.
	identityCheckTimeout = 15 * time.Second

	sessionPrefix = "kubecost-s3-exporter-"
)

// Input is what Load needs. Only Region is required.
type Input struct {
	// Region is the cluster's region, the default for every client unless
	// AWS_REGION or AWS_DEFAULT_REGION is set.
	Region string
	// ParentRoleARN is IRSA_PARENT_IAM_ROLE_ARN; empty means no chaining.
	ParentRoleARN string
	// ClusterName names the STS sessions kubecost-s3-exporter-<cluster>,
	// so CloudTrail shows which cluster's exporter acted.
	ClusterName string
	// Lookup reads the AWS_* variables awsauth interprets itself:
	// AWS_REGION, AWS_DEFAULT_REGION, AWS_ROLE_ARN,
	// AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_SESSION_NAME, AWS_ENDPOINT_URL,
	// AWS_ENDPOINT_URL_<SERVICE> and AWS_IGNORE_CONFIGURED_ENDPOINT_URLS.
	// nil means os.LookupEnv. Anything else the SDK reads (profiles, static
	// keys, IMDS settings) still comes from the process environment.
	Lookup func(string) (string, bool)
	// Logger receives credential events; never secrets. nil discards.
	Logger *slog.Logger
	// HTTPClient overrides the SDK's HTTP client for AWS calls. Never pass
	// the Kubecost client here: the Kubecost CA bundle is not for AWS. nil
	// means NewHTTPClient(RequestTimeout, RequestTimeoutSetting).
	HTTPClient config.HTTPClient
	// RequestTimeout bounds how long an S3, STS or Secrets Manager call may
	// make no progress (see NewHTTPClient); 0 means DefaultRequestTimeout.
	// RequestTimeoutSetting names the variable that sets it, for errors.
	RequestTimeout        time.Duration
	RequestTimeoutSetting string
	// ExpiryWindow and SessionDuration override the defaults above.
	ExpiryWindow    time.Duration
	SessionDuration time.Duration
}

// Identity is the resolved AWS identity of the run.
type Identity struct {
	// Config signs every AWS call: with the parent's credentials when
	// chaining, else with the default chain's (web identity on EKS).
	Config aws.Config
	// Chain describes how the credentials are obtained, for logs.
	Chain string
	// CallerARN and Account come from sts:GetCallerIdentity; both are ""
	// when STS could not be reached for that check (see Load).
	CallerARN string
	Account   string
	// SessionName is the STS session name used for every assumed role.
	SessionName string
	// S3Endpoint is the custom S3 endpoint from AWS_ENDPOINT_URL_S3 or
	// AWS_ENDPOINT_URL, or "". S3 clients must use path-style addressing
	// when it is set (CONTRACT §1).
	S3Endpoint string
}

// Load resolves the credential chain and proves it works before any export
// starts, so a broken trust policy fails the run at once with one clear
// error (the caller exits 1) instead of after the first Kubecost query:
//
//  1. the child credentials are retrieved (web identity or default chain);
//  2. with a parent role, AssumeRole runs with them;
//  3. sts:GetCallerIdentity confirms the final identity and gives the ARN
//     for the logs. It needs no IAM permission and cannot be denied, so
//     only an authentication error from it is fatal; if STS is merely
//     unreachable (S3-only VPC with node credentials) Load logs a warning
//     and continues.
func Load(ctx context.Context, in Input) (*Identity, error) {
	lookup := in.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	log := in.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	env := envSource{lookup}
	window := orDefault(in.ExpiryWindow, DefaultExpiryWindow)
	duration := orDefault(in.SessionDuration, DefaultSessionDuration)

	region := firstNonEmpty(env.get("AWS_REGION"), env.get("AWS_DEFAULT_REGION"), in.Region)
	if region == "" {
		return nil, errors.New("awsauth: no AWS region: set AWS_REGION or give the cluster's region")
	}
	session := SessionName(in.ClusterName)

	opts := []func(*config.LoadOptions) error{
		config.WithRegion(region),
		config.WithCredentialsCacheOptions(func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = window }),
		// SDK warnings become structured log lines like ours. Request and
		// response logging stays off: it would print signed headers.
		config.WithLogger(sdkLogger(log)),
		config.WithClientLogMode(0),
	}
	httpClient := in.HTTPClient
	if httpClient == nil {
		httpClient = NewHTTPClient(in.RequestTimeout, in.RequestTimeoutSetting)
	}
	opts = append(opts, config.WithHTTPClient(httpClient))
	if u := env.get("AWS_ENDPOINT_URL"); u != "" && !env.ignoreEndpoints() {
		opts = append(opts, config.WithBaseEndpoint(u))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("awsauth: load AWS config: %w", err)
	}
	// Consulted first by every service client for AWS_ENDPOINT_URL_<SERVICE>,
	// so endpoints follow Lookup like the rest of the configuration.
	cfg.ConfigSources = append([]any{env}, cfg.ConfigSources...)

	var providers []*loggedProvider
	roleARN, tokenFile := env.get("AWS_ROLE_ARN"), env.get("AWS_WEB_IDENTITY_TOKEN_FILE")
	chain := "default credential chain"
	switch {
	case roleARN != "" && tokenFile != "":
		// Built here rather than left to LoadDefaultConfig so that Lookup
		// decides, and so the session carries our recognisable name.
		webSession := firstNonEmpty(env.get("AWS_ROLE_SESSION_NAME"), session)
		web := stscreds.NewWebIdentityRoleProvider(sts.NewFromConfig(cfg), roleARN, stscreds.IdentityTokenFile(tokenFile),
			func(o *stscreds.WebIdentityRoleOptions) { o.RoleSessionName = webSession })
		p := &loggedProvider{next: web, log: log, step: "web-identity", role: roleARN}
		providers = append(providers, p)
		cfg.Credentials = aws.NewCredentialsCache(p, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = window })
		chain = "web-identity " + roleARN
	case roleARN != "" || tokenFile != "":
		// The SDK would silently fall through to other credentials; a
		// half-configured IRSA is a mistake worth stopping for.
		return nil, fmt.Errorf("awsauth: AWS_ROLE_ARN=%q and AWS_WEB_IDENTITY_TOKEN_FILE=%q must be set together (IRSA sets both)", roleARN, tokenFile)
	}

	child, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		if roleARN != "" {
			return nil, fmt.Errorf("awsauth: web identity %s (token file %s): %w", roleARN, tokenFile, err)
		}
		return nil, fmt.Errorf("awsauth: no AWS credentials found (IRSA not configured, and the default chain failed): %w", err)
	}
	if roleARN == "" {
		chain += " (" + child.Source + ")"
	}

	if in.ParentRoleARN != "" {
		assume := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), in.ParentRoleARN, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = session
			o.Duration = duration
		})
		p := &loggedProvider{next: assume, log: log, step: "assume-role", role: in.ParentRoleARN}
		providers = append(providers, p)
		cfg = cfg.Copy()
		cfg.Credentials = aws.NewCredentialsCache(p, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = window })
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			return nil, fmt.Errorf("awsauth: cannot assume parent role %s (IRSA_PARENT_IAM_ROLE_ARN) with %s: %w%s",
				in.ParentRoleARN, chain, err, assumeHint(err))
		}
		chain += " -> assume-role " + in.ParentRoleARN
	}

	id := &Identity{Config: cfg, Chain: chain, SessionName: session, S3Endpoint: env.s3Endpoint()}
	if err := id.checkCaller(ctx, log); err != nil {
		return nil, err
	}
	for _, p := range providers {
		p.loaded.Store(true)
	}
	log.Info("aws credentials ready", "chain", id.Chain, "caller", id.CallerARN, "account", id.Account,
		"region", cfg.Region, "session", id.SessionName, "s3_endpoint", id.S3Endpoint)
	return id, nil
}

// checkCaller runs sts:GetCallerIdentity; see Load for when it is fatal.
func (id *Identity) checkCaller(ctx context.Context, log *slog.Logger) error {
	cctx, cancel := context.WithTimeout(ctx, identityCheckTimeout)
	defer cancel()
	out, err := sts.NewFromConfig(id.Config).GetCallerIdentity(cctx, &sts.GetCallerIdentityInput{})
	if err == nil {
		id.CallerARN, id.Account = aws.ToString(out.Arn), aws.ToString(out.Account)
		return nil
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "InvalidClientTokenId", "SignatureDoesNotMatch", "ExpiredToken", "UnrecognizedClientException", "AccessDenied":
			return fmt.Errorf("awsauth: credentials from %s were rejected: %w", id.Chain, err)
		}
	}
	if ctx.Err() != nil { // the run itself was cancelled, not a slow STS
		return fmt.Errorf("awsauth: get caller identity: %w", err)
	}
	log.Warn("could not confirm the AWS identity with sts:GetCallerIdentity; continuing", "chain", id.Chain, "err", err)
	return nil
}

// assumeHint turns the common AccessDenied into a next step.
func assumeHint(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "AccessDenied" {
		return " (the parent role's trust policy must allow the child role to call sts:AssumeRole, and the child role needs sts:AssumeRole on the parent)"
	}
	return ""
}

// sessionNameBad matches characters STS rejects in RoleSessionName.
var sessionNameBad = regexp.MustCompile(`[^\w+=,.@-]`)

// SessionName is kubecost-s3-exporter-<cluster>, made valid for STS
// (2-64 characters of [\w+=,.@-]). A name too long is cut and ends in a
// short hash of the full cluster name, so two long cluster names sharing a
// prefix still get distinct sessions in CloudTrail.
func SessionName(cluster string) string {
	name := sessionPrefix + sessionNameBad.ReplaceAllString(cluster, "-")
	if cluster == "" {
		name = strings.TrimSuffix(sessionPrefix, "-")
	}
	if len(name) <= 64 {
		return name
	}
	return name[:64-9] + "-" + shortHash(cluster)
}

// loggedProvider logs every credential issue (start-up and each refresh)
// with its expiry, and refresh failures during the run. It never logs the
// credentials themselves.
type loggedProvider struct {
	next   aws.CredentialsProvider
	log    *slog.Logger
	step   string
	role   string
	loaded atomic.Bool // set once Load returned: before that, Load reports errors itself
}

func (p *loggedProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := p.next.Retrieve(ctx)
	if err != nil {
		if p.loaded.Load() {
			p.log.Warn("aws credentials refresh failed", "step", p.step, "role", p.role, "err", err)
		}
		return c, err
	}
	event := "aws credentials issued"
	if p.loaded.Load() {
		event = "aws credentials refreshed"
	}
	p.log.Info(event, "step", p.step, "role", p.role, "expires", c.Expires.UTC().Format(time.RFC3339))
	return c, nil
}

// sdkLogger routes the SDK's own messages (warnings such as a missing
// response checksum) into slog.
func sdkLogger(log *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(class logging.Classification, format string, v ...any) {
		level := slog.LevelDebug
		if class == logging.Warn {
			level = slog.LevelWarn
		}
		log.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
	})
}

func orDefault(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
