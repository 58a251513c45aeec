// Package ghfake is an in-process stand-in for the part of GitHub's
// releases API the release workflow uses (internal/ghrelease), for tests
// that cannot reach GitHub. It models what makes a re-run hard, as GitHub
// documents it (https://docs.github.com/en/rest/releases):
//   - drafts are listed by GET /repos/{o}/{r}/releases but not returned by
//     GET .../releases/tags/{tag};
//   - assets are uploaded to the release's upload_url, one name once (422
//     already_exists), and read back by id with Accept:
//     application/octet-stream;
//   - with immutable releases on for the repository, publishing a release
//     makes it immutable: its assets can no longer be added or deleted
//     (422 "Cannot upload assets to an immutable release"); a draft stays
//     mutable
//     (https://docs.github.com/en/code-security/supply-chain-security/understanding-your-software-supply-chain/immutable-releases);
//   - an asset is "uploaded" once its bytes are in; AddStarter leaves one
//     as a failed upload does, state "starter": it holds its name (another
//     upload of it is refused) and cannot be downloaded;
//   - several drafts of one tag may exist, and a published release
//     besides; the list is newest first;
//   - make_latest "false" leaves Latest where it was; "true" makes the
//     release Latest; "legacy" makes Latest the full release with the
//     highest version (GitHub: by creation date and version), so a
//     backport published after a newer version does not take the mark; a
//     pre-release is never Latest.
package ghfake

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"sync"
)

// Asset is a stored release asset; State is "uploaded" or, for a failed
// upload, "starter".
type Asset struct {
	ID    int64
	Name  string
	Data  []byte
	State string
}

// Release is a stored release.
type Release struct {
	ID                           int64
	Tag                          string
	Draft, Prerelease, Immutable bool
	Assets                       []*Asset
}

// Server is the fake; its fields may be set before the first request.
type Server struct {
	*httptest.Server
	Repo string
	// ImmutableReleases is the repository setting: publishing makes a
	// release immutable.
	ImmutableReleases bool

	mu       sync.Mutex
	next     int64
	releases []*Release
	latest   int64 // the release marked Latest
	// Log is every mutating request: "create v1 ...", "upload v1 NAME", ...
	Log []string
	// Mangle, when set, changes what an upload stores: a storage fault the
	// publish step must notice when it reads the assets back.
	Mangle func(name string, data []byte) []byte
}

// New starts a fake for repo (owner/name).
func New(repo string) *Server {
	s := &Server{Repo: repo, next: 100}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Add stores a release as a test's starting state and returns it.
func (s *Server) Add(tag string, draft, prerelease bool, assets map[string][]byte) *Release {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &Release{ID: s.id(), Tag: tag, Draft: draft, Prerelease: prerelease, Immutable: !draft && s.ImmutableReleases}
	for _, name := range sortedKeys(assets) {
		r.Assets = append(r.Assets, &Asset{ID: s.id(), Name: name, Data: assets[name], State: "uploaded"})
	}
	s.releases = append(s.releases, r)
	if !draft && !prerelease {
		s.latest = s.legacyLatest()
	}
	return r
}

// AddStarter adds to r an asset left by a failed upload: state "starter",
// part of data.
func (s *Server) AddStarter(r *Release, name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Assets = append(r.Assets, &Asset{ID: s.id(), Name: name, Data: data[:len(data)/2], State: "starter"})
}

// Releases returns copies of every release of tag, oldest first.
func (s *Server) Releases(tag string) []Release {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Release
	for _, r := range s.releases {
		if r.Tag == tag {
			out = append(out, *r)
		}
	}
	return out
}

// Latest returns the tag of the release marked Latest, or "".
func (s *Server) Latest() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.releases {
		if r.ID == s.latest {
			return r.Tag
		}
	}
	return ""
}

// Get returns a copy of tag's release (nil if none; the published one if
// the tag has one) and whether it is Latest.
func (s *Server) Get(tag string) (*Release, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pass := range []bool{false, true} {
		for _, r := range s.releases {
			if r.Tag != tag || (r.Draft && !pass) {
				continue
			}
			c := *r
			return &c, s.latest == r.ID
		}
	}
	return nil, false
}

// legacyLatest is GitHub's "legacy" choice: the published full release
// with the highest version (vMAJOR.MINOR.PATCH; others lose).
func (s *Server) legacyLatest() int64 {
	var best *Release
	for _, r := range s.releases {
		if r.Draft || r.Prerelease {
			continue
		}
		if best == nil || versionLess(best.Tag, r.Tag) {
			best = r
		}
	}
	if best == nil {
		return 0
	}
	return best.ID
}

var version = regexp.MustCompile(`^v([0-9]+)\.([0-9]+)\.([0-9]+)$`)

func versionLess(a, b string) bool {
	ma, mb := version.FindStringSubmatch(a), version.FindStringSubmatch(b)
	if ma == nil || mb == nil {
		return ma == nil && mb != nil
	}
	for i := 1; i <= 3; i++ {
		x, _ := strconv.Atoi(ma[i])
		y, _ := strconv.Atoi(mb[i])
		if x != y {
			return x < y
		}
	}
	return false
}

func (s *Server) id() int64 { s.next++; return s.next }

var (
	reList    = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/releases$`)
	reOne     = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/releases/([0-9]+)$`)
	reTag     = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/releases/tags/(.+)$`)
	reAsset   = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/releases/assets/([0-9]+)$`)
	reUploads = regexp.MustCompile(`^/uploads/repos/([^/]+/[^/]+)/releases/([0-9]+)/assets$`)
)

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := req.URL.Path
	var m []string
	match := func(re *regexp.Regexp) bool {
		m = re.FindStringSubmatch(p)
		return m != nil && m[1] == s.Repo
	}
	switch {
	case req.Method == http.MethodGet && match(reList):
		s.list(w, req)
	case req.Method == http.MethodGet && match(reTag):
		for _, r := range s.releases {
			if r.Tag == m[2] && !r.Draft {
				s.json(w, http.StatusOK, s.view(r))
				return
			}
		}
		s.fail(w, http.StatusNotFound, "Not Found")
	case req.Method == http.MethodPost && match(reList):
		s.create(w, req)
	case req.Method == http.MethodPatch && match(reOne):
		s.patch(w, req, m[2])
	case req.Method == http.MethodPost && match(reUploads):
		s.upload(w, req, m[2])
	case (req.Method == http.MethodGet || req.Method == http.MethodDelete) && match(reAsset):
		s.asset(w, req, m[2])
	default:
		s.fail(w, http.StatusNotFound, "Not Found")
	}
}

func (s *Server) list(w http.ResponseWriter, req *http.Request) {
	page, _ := strconv.Atoi(req.URL.Query().Get("page"))
	per, _ := strconv.Atoi(req.URL.Query().Get("per_page"))
	if page < 1 {
		page = 1
	}
	if per < 1 {
		per = 30
	}
	out := []map[string]any{}
	for i := len(s.releases) - 1; i >= 0; i-- { // newest first, as GitHub lists
		out = append(out, s.view(s.releases[i]))
	}
	lo, hi := min((page-1)*per, len(out)), min(page*per, len(out))
	s.json(w, http.StatusOK, out[lo:hi])
}

func (s *Server) create(w http.ResponseWriter, req *http.Request) {
	var body struct {
		TagName    string `json:"tag_name"`
		Draft      bool   `json:"draft"`
		Prerelease bool   `json:"prerelease"`
		MakeLatest string `json:"make_latest"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil || body.TagName == "" {
		s.fail(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	for _, r := range s.releases {
		if r.Tag == body.TagName && !r.Draft {
			s.fail(w, http.StatusUnprocessableEntity, "Validation Failed: tag_name already_exists")
			return
		}
	}
	r := &Release{ID: s.id(), Tag: body.TagName, Draft: body.Draft, Prerelease: body.Prerelease}
	s.releases = append(s.releases, r)
	s.Log = append(s.Log, fmt.Sprintf("create %s draft=%t prerelease=%t", r.Tag, r.Draft, r.Prerelease))
	if !r.Draft {
		s.publish(r, body.MakeLatest)
	}
	s.json(w, http.StatusCreated, s.view(r))
}

func (s *Server) patch(w http.ResponseWriter, req *http.Request, id string) {
	r := s.byID(id)
	if r == nil {
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	var body struct {
		Draft      *bool  `json:"draft"`
		Prerelease *bool  `json:"prerelease"`
		MakeLatest string `json:"make_latest"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		s.fail(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	if body.Prerelease != nil {
		r.Prerelease = *body.Prerelease
	}
	s.Log = append(s.Log, fmt.Sprintf("patch %s draft=%v prerelease=%t make_latest=%s", r.Tag, body.Draft != nil && *body.Draft, r.Prerelease, body.MakeLatest))
	if body.Draft != nil && !*body.Draft && r.Draft {
		r.Draft = false
		s.publish(r, body.MakeLatest)
	}
	s.json(w, http.StatusOK, s.view(r))
}

// publish marks r published: immutable when the repository says so, and
// Latest as make_latest says (absent is "true" in GitHub's API for a
// create; here absent and "legacy" both take GitHub's legacy rule).
func (s *Server) publish(r *Release, makeLatest string) {
	r.Immutable = s.ImmutableReleases
	switch {
	case r.Prerelease || makeLatest == "false":
	case makeLatest == "legacy" || makeLatest == "":
		s.latest = s.legacyLatest()
	default:
		s.latest = r.ID
	}
}

func (s *Server) upload(w http.ResponseWriter, req *http.Request, id string) {
	r := s.byID(id)
	name := req.URL.Query().Get("name")
	switch {
	case r == nil:
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	case r.Immutable:
		s.fail(w, http.StatusUnprocessableEntity, "Cannot upload assets to an immutable release.")
		return
	case name == "":
		s.fail(w, http.StatusUnprocessableEntity, "Validation Failed: name missing")
		return
	}
	for _, a := range r.Assets {
		if a.Name == name {
			s.fail(w, http.StatusUnprocessableEntity, "Validation Failed: name already_exists")
			return
		}
	}
	data, err := io.ReadAll(req.Body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	if s.Mangle != nil {
		data = s.Mangle(name, data)
	}
	a := &Asset{ID: s.id(), Name: name, Data: data, State: "uploaded"}
	r.Assets = append(r.Assets, a)
	s.Log = append(s.Log, "upload "+r.Tag+" "+name)
	s.json(w, http.StatusCreated, assetView(a))
}

func (s *Server) asset(w http.ResponseWriter, req *http.Request, id string) {
	for _, r := range s.releases {
		for i, a := range r.Assets {
			if strconv.FormatInt(a.ID, 10) != id {
				continue
			}
			if req.Method == http.MethodDelete {
				if r.Immutable {
					s.fail(w, http.StatusUnprocessableEntity, "Cannot delete assets of an immutable release.")
					return
				}
				r.Assets = append(r.Assets[:i], r.Assets[i+1:]...)
				s.Log = append(s.Log, "delete "+r.Tag+" "+a.Name)
				w.WriteHeader(http.StatusNoContent)
				return
			}
			if req.Header.Get("Accept") != "application/octet-stream" {
				s.json(w, http.StatusOK, assetView(a))
				return
			}
			if a.State != "uploaded" {
				s.fail(w, http.StatusNotFound, "Not Found")
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(a.Data)
			return
		}
	}
	s.fail(w, http.StatusNotFound, "Not Found")
}

func (s *Server) byID(id string) *Release {
	for _, r := range s.releases {
		if strconv.FormatInt(r.ID, 10) == id {
			return r
		}
	}
	return nil
}

func (s *Server) view(r *Release) map[string]any {
	assets := []map[string]any{}
	for _, a := range r.Assets {
		assets = append(assets, assetView(a))
	}
	return map[string]any{
		"id": r.ID, "tag_name": r.Tag, "draft": r.Draft, "prerelease": r.Prerelease, "immutable": r.Immutable,
		"upload_url": fmt.Sprintf("%s/uploads/repos/%s/releases/%d/assets{?name,label}", s.URL, s.Repo, r.ID),
		"assets":     assets,
	}
}

func assetView(a *Asset) map[string]any {
	sum := sha256.Sum256(a.Data)
	return map[string]any{"id": a.ID, "name": a.Name, "size": len(a.Data), "digest": "sha256:" + hex.EncodeToString(sum[:]), "state": a.State}
}

func (s *Server) json(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	s.json(w, code, map[string]string{"message": msg})
}

func sortedKeys(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }
