package chartpack

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// ignore is the subset of .helmignore that the chart uses: comments, blank
// lines, glob patterns matched against a file's base name or its path, and
// a trailing "/" for directories only. A rule this does not understand (a
// "!" negation, a "**") is an error rather than a silent difference from
// helm's packaging; TestMatchesHelmPackage holds the two to one file list.
type ignore struct {
	rules []ignoreRule
}

type ignoreRule struct {
	pattern string
	dirOnly bool
}

func readIgnore(file string) (*ignore, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &ignore{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("chartpack: %w", err)
	}
	ign := &ignore{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "!") || strings.Contains(l, "**") {
			return nil, fmt.Errorf("chartpack: %s:%d: %q is not supported", file, n, l)
		}
		r := ignoreRule{pattern: strings.TrimPrefix(l, "/")}
		if strings.HasSuffix(r.pattern, "/") {
			r.pattern, r.dirOnly = strings.TrimSuffix(r.pattern, "/"), true
		}
		if _, err := path.Match(r.pattern, ""); err != nil {
			return nil, fmt.Errorf("chartpack: %s:%d: %q: %w", file, n, l, err)
		}
		ign.rules = append(ign.rules, r)
	}
	return ign, sc.Err()
}

// ignored reports whether the slash path rel (a directory when dir) is left
// out. Like helm, .helmignore itself is packaged unless a rule says no.
func (ig *ignore) ignored(rel string, dir bool) bool {
	for _, r := range ig.rules {
		if r.dirOnly && !dir {
			continue
		}
		if ok, _ := path.Match(r.pattern, rel); ok {
			return true
		}
		if ok, _ := path.Match(r.pattern, path.Base(rel)); ok {
			return true
		}
	}
	return false
}
