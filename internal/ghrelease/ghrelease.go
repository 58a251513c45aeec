// Package ghrelease is the part of GitHub's REST API the release workflow
// needs for its GitHub release: find a tag's release (a draft too), create
// a draft, upload, download and delete assets, publish. It is release
// tooling, used by cmd/kse-release; the exporter never links it.
//
// The API facts it relies on (https://docs.github.com/en/rest/releases):
//   - GET /repos/{owner}/{repo}/releases/tags/{tag} returns published
//     releases only; drafts are listed by GET /repos/{owner}/{repo}/releases
//     to a token with push access. So a tag's release is looked up in the
//     list, or a re-run takes its own draft for "no release".
//   - Drafts do not hold a tag: one tag may have several drafts, and a
//     published release besides (a second published release of a tag is
//     refused, 422 already_exists). So every release of the tag is
//     returned, and the caller decides.
//   - An asset's state is "uploaded" once its bytes are in; an upload that
//     failed half-way leaves it in another state ("starter"), holding its
//     name, so the same name cannot be uploaded again until it is deleted.
//   - Assets are uploaded to the release's upload_url (uploads.github.com)
//     and read back from GET /repos/{owner}/{repo}/releases/assets/{id} with
//     Accept: application/octet-stream, which works for drafts (the
//     browser_download_url of a draft's asset does not).
//   - With immutable releases on, a published release's assets can no
//     longer be added, changed or deleted (422); a draft's can
//     (https://docs.github.com/en/code-security/supply-chain-security/understanding-your-software-supply-chain/immutable-releases).
package ghrelease

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client talks to one repository's releases.
type Client struct {
	API   string // https://api.github.com, or $GITHUB_API_URL
	Repo  string // owner/name
	Token string
	HTTP  *http.Client
}

// Release is the part of a release object the workflow reads.
type Release struct {
	ID         int64   `json:"id"`
	TagName    string  `json:"tag_name"`
	Draft      bool    `json:"draft"`
	Prerelease bool    `json:"prerelease"`
	Immutable  bool    `json:"immutable"`
	UploadURL  string  `json:"upload_url"`
	Assets     []Asset `json:"assets"`
}

// Asset is one release asset. Digest ("sha256:...") is absent for assets
// uploaded before GitHub recorded digests; nothing here trusts it over the
// bytes. State is "uploaded" for an asset whose upload completed.
type Asset struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
	State  string `json:"state"`
}

// Uploaded says whether the asset's upload completed.
func (a Asset) Uploaded() bool { return a.State == "uploaded" }

// Releases returns every release of tag, drafts and published, in the
// list's order (newest first): the whole list is read, so a newer draft
// does not hide a published release.
func (c *Client) Releases(ctx context.Context, tag string) ([]*Release, error) {
	var out []*Release
	for page := 1; ; page++ {
		var list []Release
		path := fmt.Sprintf("/repos/%s/releases?per_page=100&page=%d", c.Repo, page)
		if err := c.do(ctx, http.MethodGet, c.API+path, nil, "", &list); err != nil {
			return nil, err
		}
		for i := range list {
			if list[i].TagName == tag {
				out = append(out, &list[i])
			}
		}
		if len(list) < 100 {
			return out, nil
		}
	}
}

// CreateDraft creates tag's release as a draft, with GitHub's generated
// notes and the pre-release mark.
func (c *Client) CreateDraft(ctx context.Context, tag string, prerelease bool) (*Release, error) {
	body := map[string]any{"tag_name": tag, "name": tag, "draft": true, "prerelease": prerelease, "generate_release_notes": true}
	var r Release
	err := c.do(ctx, http.MethodPost, c.API+"/repos/"+c.Repo+"/releases", body, "", &r)
	return &r, err
}

// Publish turns a draft into a published release. A pre-release is marked
// so, which GitHub never makes Latest ("Drafts and prereleases cannot be
// set as latest", make_latest in the create/update release docs), and
// make_latest is false besides; a release is made Latest by GitHub's rule
// ("legacy": the newest by date and version), so publishing a backport
// does not take the mark from a newer version.
func (c *Client) Publish(ctx context.Context, r *Release, prerelease bool) (*Release, error) {
	latest := "legacy"
	if prerelease {
		latest = "false"
	}
	body := map[string]any{"draft": false, "prerelease": prerelease, "make_latest": latest}
	var out Release
	err := c.do(ctx, http.MethodPatch, fmt.Sprintf("%s/repos/%s/releases/%d", c.API, c.Repo, r.ID), body, "", &out)
	return &out, err
}

// Upload adds an asset to r.
func (c *Client) Upload(ctx context.Context, r *Release, name string, data []byte) error {
	base, _, _ := strings.Cut(r.UploadURL, "{")
	if base == "" {
		return fmt.Errorf("ghrelease: release %d has no upload_url", r.ID)
	}
	u := base + "?name=" + url.QueryEscape(name)
	return c.do(ctx, http.MethodPost, u, data, "application/octet-stream", nil)
}

// Delete removes an asset (of a draft: a published immutable release
// refuses).
func (c *Client) Delete(ctx context.Context, a Asset) error {
	return c.do(ctx, http.MethodDelete, fmt.Sprintf("%s/repos/%s/releases/assets/%d", c.API, c.Repo, a.ID), nil, "", nil)
}

// Download returns an asset's bytes.
func (c *Client) Download(ctx context.Context, a Asset) ([]byte, error) {
	req, err := c.request(ctx, http.MethodGet, fmt.Sprintf("%s/repos/%s/releases/assets/%d", c.API, c.Repo, a.ID), nil, "")
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/octet-stream")
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("ghrelease: download %s: %w", a.Name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("ghrelease: download %s: %w", a.Name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ghrelease: download %s: %s: %s", a.Name, resp.Status, bytes.TrimSpace(data))
	}
	return data, nil
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) request(ctx context.Context, method, u string, body io.Reader, contentType string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("ghrelease: %w", err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req, nil
}

// do sends body (JSON, or raw bytes when contentType is set) and decodes
// the answer into out; any status but 2xx is an error naming GitHub's
// message (an immutable release's 422 says so).
func (c *Client) do(ctx context.Context, method, u string, body any, contentType string, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("ghrelease: %w", err)
		}
		rd, contentType = bytes.NewReader(data), "application/json"
	}
	req, err := c.request(ctx, method, u, rd, contentType)
	if err != nil {
		return err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("ghrelease: %s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("ghrelease: %s %s: %w", method, u, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("ghrelease: %s %s: %s: %s", method, u, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("ghrelease: %s %s: %w", method, u, err)
		}
	}
	return nil
}
