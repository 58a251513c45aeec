package chart_test

import (
	"strings"
	"testing"
)

// userOnChartKeys are user annotations and labels on keys the chart sets
// itself but lets the user override. Each rendering below is decoded
// strictly (decode), so a key written twice fails it.
var userOnChartKeys = []string{
	"--set-string", `exportJob.annotations.argocd\.argoproj\.io/sync-wave=3`,
	"--set-string", `exportJob.annotations.team=cost`,
	"--set-string", `cronJob.annotations.team=cost`,
	"--set-string", `podAnnotations.team=cost`,
	"--set-string", `podLabels.app\.kubernetes\.io/part-of=finops`,
	"--set-string", `podLabels.team=cost`,
	"--set-string", `serviceAccount.annotations.team=cost`,
}

// TestUserMetadataOnChartKeys: a user key the chart also sets appears once,
// with the user's value, and leaves the chart's checksums as they were.
func TestUserMetadataOnChartKeys(t *testing.T) {
	t.Parallel()
	base := render(t, required...)
	rd := render(t, withRequired(userOnChartKeys...)...)
	job, cj := rd.exportJob(t), rd.cronJob(t)
	if got := job.Annotations["argocd.argoproj.io/sync-wave"]; got != "3" {
		t.Errorf("export Job sync-wave %q, want the user's 3", got)
	}
	// checksum/config hashes the exporter's configuration, which user
	// metadata does not touch; checksum/export-job hashes the Job's spec
	// (pod labels included), and the CronJob must record the Job's.
	if k := "checksum/config"; job.Annotations[k] != base.exportJob(t).Annotations[k] || cj.Annotations[k] != base.cronJob(t).Annotations[k] {
		t.Errorf("user metadata changed %s", k)
	}
	if k := "checksum/export-job"; cj.Annotations[k] != job.Annotations[k] || !strings.HasSuffix(job.Name, job.Annotations[k][:10]) {
		t.Errorf("the CronJob records %s %q, the Job %s has %q", k, cj.Annotations[k], job.Name, job.Annotations[k])
	}
	for kind, tmpl := range map[string]map[string]string{
		"Job pod":     job.Spec.Template.Labels,
		"CronJob pod": cj.Spec.JobTemplate.Spec.Template.Labels,
	} {
		if tmpl["app.kubernetes.io/part-of"] != "finops" || tmpl["team"] != "cost" || tmpl["app.kubernetes.io/instance"] != release {
			t.Errorf("%s labels %v", kind, tmpl)
		}
	}
	if job.Spec.Template.Annotations["team"] != "cost" || job.Spec.Template.Annotations["checksum/config"] != job.Annotations["checksum/config"] {
		t.Errorf("Job pod annotations %v", job.Spec.Template.Annotations)
	}
	// No key is written twice in the raw text either (decode is strict, and
	// this names the line when it is not).
	for i, doc := range docSep.Split(rd.raw, -1) {
		checkNoDuplicateKeys(t, i, doc)
	}
}

// TestChartOwnedKeysRefused: the checksums the upgrade logic reads, the
// labels selectors match and the IRSA role the chart sets cannot be
// overridden: the render fails and names the value.
func TestChartOwnedKeysRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, where string }{
		{`podAnnotations.checksum/config=x`, "podAnnotations"},
		{`cronJob.annotations.checksum/export-job=x`, "cronJob.annotations"},
		{`cronJob.annotations.checksum/config=x`, "cronJob.annotations"},
		{`exportJob.annotations.checksum/export-job=x`, "exportJob.annotations"},
		{`podLabels.app\.kubernetes\.io/instance=x`, "podLabels"},
		{`podLabels.app\.kubernetes\.io/name=x`, "podLabels"},
		{`podLabels.kubecost-s3-exporter/export-job=x`, "podLabels"},
		{`serviceAccount.annotations.eks\.amazonaws\.com/role-arn=arn:aws:iam::111122223333:role/other`, "serviceAccount.annotations"},
	} {
		args := withRequired("--set-string", tc.set, "--set", "serviceAccount.roleArn=arn:aws:iam::111122223333:role/r")
		_, stderr, err := runHelm(t, templateArgs(args...)...)
		if err == nil {
			t.Errorf("%s: rendered, want a refusal", tc.set)
			continue
		}
		if !strings.Contains(stderr, tc.where+": ") || !strings.Contains(stderr, "is set by the chart and cannot be overridden") {
			t.Errorf("%s: %v\n%s", tc.set, err, stderr)
		}
	}
}

// checkNoDuplicateKeys fails the test when a document repeats a key.
func checkNoDuplicateKeys(t *testing.T, doc int, text string) {
	t.Helper()
	if line := duplicateKeyLine(text); line != "" {
		t.Errorf("document %d: key written twice: %s\n%s", doc, line, text)
	}
}

func hasDuplicateKey(text string) bool { return duplicateKeyLine(text) != "" }

// duplicateKeyLine returns the first line whose mapping key repeats a key at
// the same indentation within one block of a YAML document, or "".
func duplicateKeyLine(text string) string {
	type scope struct {
		indent int
		keys   map[string]bool
	}
	var stack []scope
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(trimmed)
		if strings.HasPrefix(trimmed, "- ") {
			// A list item opens a new mapping one level deeper.
			indent += 2
			trimmed = trimmed[2:]
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, scope{indent, map[string]bool{}})
		}
		for len(stack) > 0 && stack[len(stack)-1].indent > indent {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 || stack[len(stack)-1].indent < indent {
			stack = append(stack, scope{indent, map[string]bool{}})
		}
		key, _, ok := strings.Cut(trimmed, ":")
		if !ok || strings.ContainsAny(key, " {[") {
			continue
		}
		top := stack[len(stack)-1]
		if top.keys[key] {
			return line
		}
		top.keys[key] = true
	}
	return ""
}

// TestDuplicateKeyCheck: the raw-text check finds a repeated key, and
// allows one key in sibling mappings.
func TestDuplicateKeyCheck(t *testing.T) {
	dup := "metadata:\n  annotations:\n    a: \"1\"\n    b: x\n    a: \"2\"\n"
	ok := "a:\n  x: 1\nb:\n  x: 2\nc:\n  - name: n\n    v: 1\n  - name: m\n    v: 2\n"
	if !hasDuplicateKey(dup) {
		t.Error("a repeated annotation was not found")
	}
	if hasDuplicateKey(ok) {
		t.Error("sibling mappings with the same keys were reported")
	}
}
