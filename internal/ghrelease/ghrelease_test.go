package ghrelease

import (
	"fmt"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/ghfake"
)

// TestReleases: every release of the tag is returned, drafts and the
// published one, across pages of the list, and none of another tag that
// shares its prefix (v1.0.0-rc.1, v1.0.00).
func TestReleases(t *testing.T) {
	gh := ghfake.New("o/r")
	defer gh.Close()
	want := map[int64]bool{}
	want[gh.Add("v1.0.0", false, false, nil).ID] = true
	for i := range 150 { // past one page of 100
		gh.Add(fmt.Sprintf("v0.%d.0", i), false, false, nil)
	}
	gh.Add("v1.0.0-rc.1", true, true, nil)
	gh.Add("v1.0.00", false, false, nil)
	want[gh.Add("v1.0.0", true, false, nil).ID] = true
	c := &Client{API: gh.URL, Repo: "o/r", Token: "t"}
	got, err := c.Releases(t.Context(), "v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d releases of v1.0.0, want %d: %+v", len(got), len(want), got)
	}
	for _, r := range got {
		if r.TagName != "v1.0.0" || !want[r.ID] {
			t.Errorf("release %d of tag %s is not one of v1.0.0's", r.ID, r.TagName)
		}
	}
	if none, err := c.Releases(t.Context(), "v2.0.0"); err != nil || len(none) != 0 {
		t.Errorf("a tag without releases: %+v, %v", none, err)
	}
}
