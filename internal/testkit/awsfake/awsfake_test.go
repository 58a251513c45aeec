package awsfake

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

const (
	child  = "arn:aws:iam::111111111111:role/child"
	parent = "arn:aws:iam::222222222222:role/parent"
)

func stsAs(f *Fake, creds aws.CredentialsProvider) *sts.Client {
	return sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.STSURL), Credentials: creds,
		RetryMaxAttempts: 1})
}

func code(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func webIdentity(t *testing.T, f *Fake) aws.Credentials {
	t.Helper()
	out, err := stsAs(f, nil).AssumeRoleWithWebIdentity(t.Context(), &sts.AssumeRoleWithWebIdentityInput{
		RoleArn: aws.String(child), RoleSessionName: aws.String("s1"), WebIdentityToken: aws.String("tok-1"),
	})
	if err != nil {
		t.Fatalf("AssumeRoleWithWebIdentity: %v", err)
	}
	c := out.Credentials
	if aws.ToString(out.AssumedRoleUser.Arn) != "arn:aws:sts::111111111111:assumed-role/child/s1" {
		t.Errorf("AssumedRoleUser = %s", aws.ToString(out.AssumedRoleUser.Arn))
	}
	return aws.Credentials{AccessKeyID: *c.AccessKeyId, SecretAccessKey: *c.SecretAccessKey, SessionToken: *c.SessionToken,
		CanExpire: true, Expires: aws.ToTime(c.Expiration)}
}

func static(c aws.Credentials) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)
}

// The fake's checks are what make the awsauth tests meaningful, so each
// must be able to fail.
func TestSignatureChecks(t *testing.T) {
	f := Start(t)
	f.AllowWebIdentity(child, "tok-1")
	f.AllowAssumeRole(child, parent, RandomIssuer())
	good := webIdentity(t, f)
	ctx := t.Context()
	in := &sts.AssumeRoleInput{RoleArn: aws.String(parent), RoleSessionName: aws.String("s2")}

	wrongSecret := good
	wrongSecret.SecretAccessKey = otherSecret(good.SecretAccessKey)
	if _, err := stsAs(f, static(wrongSecret)).AssumeRole(ctx, in); code(err) != "SignatureDoesNotMatch" {
		t.Errorf("wrong secret: %v", err)
	}
	wrongToken := good
	wrongToken.SessionToken += "x"
	if _, err := stsAs(f, static(wrongToken)).AssumeRole(ctx, in); code(err) != "InvalidClientTokenId" {
		t.Errorf("wrong session token: %v", err)
	}
	if _, err := stsAs(f, aws.AnonymousCredentials{}).AssumeRole(ctx, in); code(err) != "MissingAuthenticationToken" {
		t.Errorf("unsigned AssumeRole: %v", err)
	}
	bad := &sts.AssumeRoleInput{RoleArn: aws.String(parent), RoleSessionName: aws.String("has space")}
	if _, err := stsAs(f, static(good)).AssumeRole(ctx, bad); code(err) != "ValidationError" {
		t.Errorf("invalid session name: %v", err)
	}
	other := &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::222222222222:role/other"), RoleSessionName: aws.String("s2")}
	if _, err := stsAs(f, static(good)).AssumeRole(ctx, other); code(err) != "AccessDenied" {
		t.Errorf("untrusted role: %v", err)
	}
	out, err := stsAs(f, static(good)).AssumeRole(ctx, in)
	if err != nil {
		t.Fatalf("AssumeRole: %v", err)
	}
	if time.Until(*out.Credentials.Expiration) < 59*time.Minute {
		t.Errorf("default session expires at %v, want about an hour", out.Credentials.Expiration)
	}
	calls := f.CallsTo("AssumeRole")
	last := calls[len(calls)-1]
	if last.AccessKeyID != good.AccessKeyID || last.Caller != "arn:aws:sts::111111111111:assumed-role/child/s1" {
		t.Errorf("recorded %+v", last)
	}
	p := aws.Credentials{AccessKeyID: *out.Credentials.AccessKeyId, SecretAccessKey: *out.Credentials.SecretAccessKey, SessionToken: *out.Credentials.SessionToken}
	who, err := stsAs(f, static(p)).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(who.Arn) != "arn:aws:sts::222222222222:assumed-role/parent/s2" || aws.ToString(who.Account) != "222222222222" {
		t.Errorf("GetCallerIdentity = %+v, %v", who, err)
	}
}

func TestExpiry(t *testing.T) {
	f := Start(t)
	f.AllowWebIdentity(child, "tok-1")
	clock := NewManualClock(time.Now())
	f.SetClock(clock.Now)
	f.SetTTL(100 * time.Millisecond)
	c := webIdentity(t, f)
	if !c.Expires.Equal(clock.Now().Add(100 * time.Millisecond).Truncate(time.Millisecond)) {
		t.Errorf("announced expiry %v, want the fake clock's now + TTL", c.Expires)
	}
	clock.Advance(99 * time.Millisecond)
	if f.Expired(c.AccessKeyID) {
		t.Fatal("expired before its TTL")
	}
	if _, err := stsAs(f, static(c)).GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); err != nil {
		t.Fatalf("credentials within their TTL: %v", err)
	}
	clock.Advance(time.Millisecond)
	if !f.Expired(c.AccessKeyID) {
		t.Fatal("not expired after its TTL")
	}
	if _, err := stsAs(f, static(c)).GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); code(err) != "ExpiredToken" {
		t.Errorf("expired credentials: %v", err)
	}
}

func TestSecretsManagerProtocol(t *testing.T) {
	f := Start(t)
	f.AllowWebIdentity(child, "tok-1")
	f.PutSecret("app/ca", "pem-bytes", child)
	c := webIdentity(t, f)
	sm := func(creds aws.Credentials) *secretsmanager.Client {
		return secretsmanager.New(secretsmanager.Options{Region: "eu-west-1", BaseEndpoint: aws.String(f.SecretsURL),
			Credentials: static(creds), RetryMaxAttempts: 1})
	}
	ctx := t.Context()
	out, err := sm(c).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("app/ca")})
	if err != nil || aws.ToString(out.SecretString) != "pem-bytes" || aws.ToString(out.Name) != "app/ca" {
		t.Fatalf("GetSecretValue = %+v, %v", out, err)
	}
	// By ARN, as returned.
	if _, err := sm(c).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: out.ARN}); err != nil {
		t.Errorf("by ARN %s: %v", aws.ToString(out.ARN), err)
	}
	if _, err := sm(c).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("nope")}); code(err) != "ResourceNotFoundException" {
		t.Errorf("missing: %v", err)
	}
	bad := c
	bad.SecretAccessKey = otherSecret(c.SecretAccessKey)
	if _, err := sm(bad).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("app/ca")}); code(err) != "InvalidSignatureException" {
		t.Errorf("bad signature: %v", err)
	}
	unknown := aws.Credentials{AccessKeyID: "AKIAUNKNOWN", SecretAccessKey: "s"}
	if _, err := sm(unknown).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("app/ca")}); code(err) != "UnrecognizedClientException" {
		t.Errorf("unknown key: %v", err)
	}
	calls := f.CallsTo("GetSecretValue")
	if calls[0].Region != "eu-west-1" || calls[0].SecretID != "app/ca" || calls[0].AccessKeyID != c.AccessKeyID {
		t.Errorf("recorded %+v", calls[0])
	}
}

// otherSecret returns a secret that differs from s in its first character.
// Replacing that character with a fixed one would leave s unchanged
// whenever s happened to start with it.
func otherSecret(s string) string {
	first := "x"
	if s[0] == 'x' {
		first = "y"
	}
	return first + s[1:]
}
