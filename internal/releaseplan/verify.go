package releaseplan

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
)

// Identity is who must have signed a release's signatures: the release
// workflow at the tag, as GitHub's OIDC token names it in the Fulcio
// certificate (SAN URI and OIDC issuer extension).
type Identity struct {
	Subject string // https://github.com/OWNER/REPO/.github/workflows/release.yml@refs/tags/vX.Y.Z
	Issuer  string // https://token.actions.githubusercontent.com
}

// ReleaseIdentity is the identity of release.yml of repo at tag on server
// (https://github.com).
func ReleaseIdentity(server, repo, tag string) Identity {
	return Identity{
		Subject: fmt.Sprintf("%s/%s/.github/workflows/release.yml@refs/tags/%s", strings.TrimSuffix(server, "/"), repo, tag),
		Issuer:  "https://token.actions.githubusercontent.com",
	}
}

// Cosign verifies signatures with the cosign binary, under one identity:
// a signature counts only when cosign accepts it for that identity, so a
// `.sig` tag made by hand with a key, a bundle signed by another workflow
// or a garbage file all read as "not signed".
type Cosign struct {
	Bin string
	ID  Identity
	// Flags are added to every verify (the registry's, e.g.
	// --allow-http-registry in tests). TrustFlags say what the certificate
	// must chain to; empty in the release, where cosign uses the Sigstore
	// public-good root (Fulcio, Rekor, CT log). The tests pass a local CA
	// (--ca-roots, --trusted-root) and --insecure-ignore-tlog/-sct: the
	// identity check is the same code either way.
	Flags      []string
	TrustFlags []string
	// BlobTrustFlags replace TrustFlags for verify-blob, whose Sigstore
	// bundle is checked against a trusted root (--trusted-root).
	BlobTrustFlags []string
	Log            io.Writer // cosign's output on a refusal (the reason)
}

func (c Cosign) identityFlags() []string {
	return []string{"--certificate-identity", c.ID.Subject, "--certificate-oidc-issuer", c.ID.Issuer}
}

// VerifyImage: a cosign signature of ref (repo@sha256:...) by the identity.
func (c Cosign) VerifyImage(ctx context.Context, ref string) error {
	return c.run(ctx, "signature of "+ref, append(append(append([]string{"verify"}, c.identityFlags()...), c.TrustFlags...), append(c.Flags, ref)...))
}

// VerifyAttestation: a cosign attestation of predicate type typ (spdxjson)
// of ref by the identity.
func (c Cosign) VerifyAttestation(ctx context.Context, ref, typ string) error {
	args := append(append([]string{"verify-attestation", "--type", typ}, c.identityFlags()...), c.TrustFlags...)
	return c.run(ctx, typ+" attestation of "+ref, append(args, append(c.Flags, ref)...))
}

// VerifyBlob: bundle (a Sigstore bundle, *.sigstore.json) is a signature
// of the file by the identity.
func (c Cosign) VerifyBlob(ctx context.Context, file, bundle string) error {
	args := append(append([]string{"verify-blob", "--new-bundle-format", "--bundle", bundle}, c.identityFlags()...), c.BlobTrustFlags...)
	return c.run(ctx, "bundle "+bundle, append(args, file))
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func (c Cosign) run(ctx context.Context, what string, args []string) error {
	if c.Bin == "" || c.ID.Subject == "" || c.ID.Issuer == "" {
		return fmt.Errorf("releaseplan: cosign: no binary or identity to verify %s with", what)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(ansi.ReplaceAllString(out.String(), ""))
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		// cosign says why (no signatures, another identity, a chain it does
		// not trust): the log keeps it, the error its last line.
		if c.Log != nil {
			fmt.Fprintf(c.Log, "releaseplan: %s: not by %s: %v: %s\n", what, c.ID.Subject, err, msg)
		}
		return fmt.Errorf("releaseplan: %s is not signed by %s: %s", what, c.ID.Subject, lastLine(msg))
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}
