package release_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// docJobs: the table of docs/release.md's first section names every job
// of release.yml, with exactly its permissions (for the job calling
// build.yml, each called job's) and exactly the jobs it needs; and no
// text says a job signs before the checks run.
func docJobs(t *testing.T, doc string) {
	read := func(file string) map[string]workflowJob {
		data, err := os.ReadFile(workflowPath(file))
		if err != nil {
			t.Fatal(err)
		}
		var wf workflowFile
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return wf.Jobs
	}
	jobs, called := read("release.yml"), read("build.yml")
	rows := map[string][]string{}
	for _, line := range strings.Split(doc, "\n") {
		if m := regexp.MustCompile("^\\| `([a-z-]+)`").FindStringSubmatch(line); m != nil && strings.Count(line, " | ") >= 3 {
			rows[m[1]] = strings.Split(line, " | ")
		}
	}
	perm := regexp.MustCompile("`([a-z-]+): (read|write)`")
	needed := regexp.MustCompile("needs ((?:`[a-z-]+`(?:, | and )?)+)")
	for _, name := range sortedKeys(jobs) {
		row, j := rows[name], jobs[name]
		if row == nil {
			t.Errorf("release.yml's job %s has no row in docs/release.md's job table", name)
			continue
		}
		want := map[string]string{"": permList(j.Permissions)}
		got := map[string]string{}
		if j.Uses != "" {
			want = map[string]string{}
			for c, cj := range called {
				want[c] = permList(cj.Permissions)
			}
			for _, seg := range strings.Split(row[1], "; ") {
				if m := regexp.MustCompile("^`([a-z-]+)`: ").FindStringSubmatch(seg); m != nil {
					got[m[1]] = permString(perm.FindAllStringSubmatch(seg, -1))
				}
			}
		} else {
			got[""] = permString(perm.FindAllStringSubmatch(row[1], -1))
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("docs/release.md: job %s%s has permissions %q, the docs say %q", name, map[bool]string{true: "", false: "/" + k}[k == ""], w, got[k])
			}
		}
		var said []string
		if m := needed.FindStringSubmatch(strings.Join(row, " | ")); m != nil {
			said = regexp.MustCompile("`([a-z-]+)`").FindAllString(m[1], -1)
			for i := range said {
				said[i] = strings.Trim(said[i], "`")
			}
		}
		n := needs(j.Needs)
		sort.Strings(n)
		sort.Strings(said)
		if !slices.Equal(n, said) {
			t.Errorf("docs/release.md: job %s needs %v, the docs say %v", name, n, said)
		}
	}
	flat := strings.Join(strings.Fields(doc), " ")
	for _, claim := range []string{"`attest` job runs before it", "attest job runs before the publish job's checks", "runs before the checks"} {
		if strings.Contains(flat, claim) {
			t.Errorf("docs/release.md still says %q", claim)
		}
	}
}

func permList(p any) string {
	m, _ := p.(map[string]any)
	var out [][]string
	for k, v := range m {
		out = append(out, []string{"", k, fmt.Sprint(v)})
	}
	return permString(out)
}

func permString(kv [][]string) string {
	var out []string
	for _, m := range kv {
		out = append(out, m[1]+": "+m[2])
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
