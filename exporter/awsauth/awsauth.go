// Package awsauth builds the AWS configuration of every S3, STS and Secrets Manager call,
// and reads secrets (FetchSecret; what they mean is package kubecost's business).
//
// On EKS, IRSA injects AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE: the web-identity role
// (the child) is the pod's identity. For a bucket in a central account, the child assumes
// IRSA_PARENT_IAM_ROLE_ARN (the parent), whose credentials sign everything after:
//
//	web-identity arn:aws:iam::111111111111:role/child -> assume-role arn:aws:iam::222222222222:role/parent
//
// Both are cached and refreshed ExpiryWindow before expiry, so a backfill of hours never
// sends an expired credential; the token file is re-read each time, as kubelet rotates it.
package awsauth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

const (
	// defaultExpiryWindow is far more than any S3 upload or retry sequence.
	defaultExpiryWindow = 5 * time.Minute
	// sessionDuration is the parent session: role chaining caps it at one hour, which every
	// role allows, so it never fails and keeps STS calls rare.
	sessionDuration      = time.Hour
	identityCheckTimeout = 15 * time.Second

	sessionPrefix = "kubecost-s3-exporter-"
)

// Input is what Load needs. Region, Lookup and RequestTimeout are required.
type Input struct {
	// Region is every client's, as given: the destination decides it, so -region is obeyed.
	Region string
	// ParentRoleARN is the role the child assumes ("": no chaining); ParentRoleSetting
	// names its variable, for errors.
	ParentRoleARN, ParentRoleSetting string
	// ClusterName names the STS sessions (SessionName), so CloudTrail shows the cluster.
	ClusterName string
	// Lookup reads the variables awsauth interprets: AWS_ROLE_ARN,
	// AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_SESSION_NAME, AWS_ENDPOINT_URL[_<SERVICE>] and
	// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS (Settings.AWSLookup). The SDK reads the rest
	// (profiles, static keys, IMDS) from the process environment.
	Lookup func(string) (string, bool)
	// Static are the destination's keys (object-store.yaml's access_key, secret_key): they
	// replace IRSA and the default chain as the child (the parent is still assumed with
	// them); Source names them in logs.
	Static *aws.Credentials
	Logger *slog.Logger // credential events, never secrets; nil discards
	// ExpiryWindow is how long before expiry credentials are refreshed; 0 is 5 minutes.
	ExpiryWindow time.Duration
	// RequestTimeout is NewHTTPClient's (S3_REQUEST_TIMEOUT); RequestTimeoutSetting names it.
	RequestTimeout        time.Duration
	RequestTimeoutSetting string
}

// Identity is the resolved AWS identity of the run.
type Identity struct {
	// Config signs every AWS call: the parent's credentials when chaining, else the default
	// chain's (web identity on EKS).
	Config aws.Config
	Chain  string // how the credentials are obtained, for logs
	// CallerARN and Account come from sts:GetCallerIdentity; "" when STS was unreachable.
	CallerARN   string
	Account     string
	SessionName string
}

// Load resolves the credential chain and proves it before any export, so a broken trust
// policy fails the run at once (exit 1), not after the first Kubecost query:
//
//  1. the child credentials are retrieved (web identity or default chain);
//  2. with a parent role, AssumeRole runs with them;
//  3. sts:GetCallerIdentity confirms the identity. It needs no IAM permission, so only an
//     authentication error is fatal; an unreachable STS (S3-only VPC with node
//     credentials) is a warning.
func Load(ctx context.Context, in Input) (*Identity, error) {
	st, err := newSetup(in)
	if err != nil {
		return nil, err
	}
	cfg, err := st.loadConfig(ctx)
	if err != nil {
		return nil, err
	}
	id := &Identity{Config: cfg, SessionName: st.session}
	if err := st.childCredentials(ctx, id); err != nil {
		return nil, err
	}
	if in.ParentRoleARN != "" {
		if err := st.assumeParent(ctx, id, in.ParentRoleARN); err != nil {
			return nil, err
		}
	}
	if err := id.checkCaller(ctx, st.log); err != nil {
		return nil, err
	}
	for _, p := range st.providers {
		p.loaded.Store(true)
	}
	st.log.Info("aws credentials ready", "chain", id.Chain, "caller", id.CallerARN, "account", id.Account,
		"region", id.Config.Region, "session", id.SessionName)
	return id, nil
}

type setup struct {
	in        Input
	env       envSource
	log       *slog.Logger
	window    time.Duration
	session   string
	providers []*loggedProvider // logged once Load has returned
}

func newSetup(in Input) (*setup, error) {
	switch {
	case in.Region == "":
		return nil, errors.New("awsauth: no AWS region in the input")
	case in.Lookup == nil:
		return nil, errors.New("awsauth: no environment lookup in the input")
	case in.RequestTimeout <= 0:
		return nil, errors.New("awsauth: no request timeout in the input")
	}
	return &setup{
		in:      in,
		env:     envSource{in.Lookup},
		log:     cmp.Or(in.Logger, slog.New(slog.DiscardHandler)),
		window:  cmp.Or(in.ExpiryWindow, defaultExpiryWindow),
		session: SessionName(in.ClusterName),
	}, nil
}

func (st *setup) loadConfig(ctx context.Context) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(st.in.Region),
		config.WithCredentialsCacheOptions(st.cacheOptions),
		// Request and response logging would print signed headers.
		config.WithLogger(sdkLogger(st.log)),
		config.WithClientLogMode(0),
		config.WithHTTPClient(NewHTTPClient(st.in.RequestTimeout, st.in.RequestTimeoutSetting)),
	}
	if u := st.env.get("AWS_ENDPOINT_URL"); u != "" && !st.env.ignoreEndpoints() {
		opts = append(opts, config.WithBaseEndpoint(u))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("awsauth: load AWS config: %w", err)
	}
	// Service clients ask it first for AWS_ENDPOINT_URL_<SERVICE>, so endpoints follow Lookup.
	cfg.ConfigSources = append([]any{st.env}, cfg.ConfigSources...)
	return cfg, nil
}

func (st *setup) cacheOptions(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = st.window }

// childCredentials sets up the pod's own credentials in id.Config and retrieves them once.
func (st *setup) childCredentials(ctx context.Context, id *Identity) error {
	roleARN, tokenFile := st.env.get("AWS_ROLE_ARN"), st.env.get("AWS_WEB_IDENTITY_TOKEN_FILE")
	id.Chain = "default credential chain"
	switch {
	case st.in.Static != nil:
		// Explicit keys win over the pod's; the caller logs them.
		id.Config.Credentials = credentials.StaticCredentialsProvider{Value: *st.in.Static}
		id.Chain = "static keys from " + cmp.Or(st.in.Static.Source, "the configuration")
		return nil
	case roleARN != "" && tokenFile != "":
		// Not LoadDefaultConfig's, so Lookup decides and the session carries our name.
		webSession := cmp.Or(st.env.get("AWS_ROLE_SESSION_NAME"), st.session)
		web := stscreds.NewWebIdentityRoleProvider(sts.NewFromConfig(id.Config), roleARN, stscreds.IdentityTokenFile(tokenFile),
			func(o *stscreds.WebIdentityRoleOptions) { o.RoleSessionName = webSession })
		p := &loggedProvider{next: web, log: st.log, step: "web-identity", role: roleARN}
		st.providers = append(st.providers, p)
		id.Config.Credentials = aws.NewCredentialsCache(p, st.cacheOptions)
		id.Chain = "web-identity " + roleARN
	case roleARN != "" || tokenFile != "":
		// The SDK would silently fall through to other credentials.
		return fmt.Errorf("awsauth: AWS_ROLE_ARN=%q and AWS_WEB_IDENTITY_TOKEN_FILE=%q must be set together (IRSA sets both)", roleARN, tokenFile)
	}
	child, err := id.Config.Credentials.Retrieve(ctx)
	switch {
	case err != nil && roleARN != "":
		return fmt.Errorf("awsauth: web identity %s (token file %s): %w", roleARN, tokenFile, err)
	case err != nil:
		return fmt.Errorf("awsauth: no AWS credentials found (IRSA not configured, and the default chain failed): %w", err)
	case roleARN == "":
		id.Chain += " (" + child.Source + ")"
	}
	return nil
}

// assumeParent switches id.Config to the parent role's credentials and proves them.
func (st *setup) assumeParent(ctx context.Context, id *Identity, parentARN string) error {
	assume := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(id.Config), parentARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = st.session
		o.Duration = sessionDuration
	})
	p := &loggedProvider{next: assume, log: st.log, step: "assume-role", role: parentARN}
	st.providers = append(st.providers, p)
	id.Config = id.Config.Copy()
	id.Config.Credentials = aws.NewCredentialsCache(p, st.cacheOptions)
	if _, err := id.Config.Credentials.Retrieve(ctx); err != nil {
		return fmt.Errorf("awsauth: cannot assume parent role %s (%s) with %s: %w%s",
			parentARN, st.in.ParentRoleSetting, id.Chain, err, assumeHint(err))
	}
	id.Chain += " -> assume-role " + parentARN
	return nil
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

func assumeHint(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "AccessDenied" {
		return " (the parent role's trust policy must allow the child role to call sts:AssumeRole, and the child role needs sts:AssumeRole on the parent)"
	}
	return ""
}

var sessionNameBad = regexp.MustCompile(`[^\w+=,.@-]`)

// SessionName is kubecost-s3-exporter-<cluster>, valid for STS (2-64 of [\w+=,.@-]); a long
// one ends in a hash of the cluster's, so names sharing a prefix stay distinct in CloudTrail.
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

func shortHash(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s)))[:8] }

// loggedProvider logs each credential issue with its expiry, and refresh failures; no secret.
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

// sdkLogger routes the SDK's messages (such as a missing checksum warning) into slog.
func sdkLogger(log *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(class logging.Classification, format string, v ...any) {
		level := slog.LevelDebug
		if class == logging.Warn {
			level = slog.LevelWarn
		}
		log.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
	})
}
