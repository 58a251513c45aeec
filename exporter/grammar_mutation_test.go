package exporter_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/grammars"
)

// TestGuardCatchesMutations applies, each in a fresh copy of the
// product's Go files, a change that reads the destination's settings
// behind its back, and requires the guard of TestGrammarsDefinedOnce to
// name it; the unchanged copy must pass.
func TestGuardCatchesMutations(t *testing.T) {
	const cliFile = "exporter/cli/sneak.go"
	read := func(name string) map[string]string {
		return map[string]string{cliFile: "package cli\n\nimport \"os\"\n\nvar _, _ = os.LookupEnv(" + name + ")\n"}
	}
	// A new destination variable: declared in Settings, then read by cli.
	settings, err := os.ReadFile("destination/destination.go")
	if err != nil {
		t.Fatal(err)
	}
	caBundle := strings.Replace(string(settings), "\tS3PartSizeMiB ", "\tCABundle string `env:\"S3_CA_BUNDLE\" desc:\"a CA bundle for the S3 endpoint\"`\n\tS3PartSizeMiB ", 1)
	if caBundle == string(settings) {
		t.Fatal("the S3_CA_BUNDLE mutation no longer applies to destination.go")
	}
	for _, m := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"cli reads S3_REQUEST_TIMEOUT", read(`"S3_REQUEST_TIMEOUT"`), "S3_REQUEST_TIMEOUT"},
		{"cli reads AWS_ENDPOINT_URL_S3", read(`"AWS_ENDPOINT_URL_S3"`), "AWS_ENDPOINT_URL_S3"},
		{"cli reads AWS_REGION", read(`"AWS_REGION"`), "AWS_REGION"},
		{"cli reads a new S3_CA_BUNDLE", merge(read(`"S3_CA_BUNDLE"`), map[string]string{"exporter/destination/destination.go": caBundle}), "S3_CA_BUNDLE"},
		{"cli builds S3_PREFIX from literals", read(`"S3_" + "PREFIX"`), "S3_PREFIX"},
		{"cli builds a name on S3_", read(`"S3_" + os.Args[0]`), "S3_"},
		{"awsauth reads AWS_REGION again", map[string]string{"exporter/awsauth/sneak.go": "package awsauth\n\nimport \"os\"\n\nvar _ = os.Getenv(\"AWS_REGION\")\n"}, "AWS_REGION"},
		{"config declares AWS_DEFAULT_REGION", map[string]string{"exporter/config/sneak.go": "package config\n\ntype sneak struct {\n\tR string `env:\"AWS_DEFAULT_REGION\"`\n}\n"}, "AWS_DEFAULT_REGION"},
	} {
		got := violationsIn(t, m.files)
		if !strings.Contains(strings.Join(got, "\n"), `"`+m.want+`"`) {
			t.Errorf("%s: the guard does not name %s: %v", m.name, m.want, got)
		}
	}
	if got := violationsIn(t, nil); len(got) != 0 {
		t.Errorf("the unchanged copy fails the guard: %v", got)
	}
}

func merge(a, b map[string]string) map[string]string {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// violationsIn copies the product's Go files under exporter/ and cmd/
// to a temporary root, writes files over them, and runs the guard.
func violationsIn(t *testing.T, files map[string]string) []string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{".", "../cmd"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel := filepath.Join("exporter", path)
			if dir != "." {
				rel = filepath.Join("cmd", strings.TrimPrefix(path, dir+"/"))
			}
			b, err := os.ReadFile(path)
			if err == nil {
				err = write(filepath.Join(root, rel), string(b))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for rel, body := range files {
		if err := write(filepath.Join(root, rel), body); err != nil {
			t.Fatal(err)
		}
	}
	lits, err := grammars.ProductLiterals(root)
	if err != nil {
		t.Fatal(err)
	}
	return destinationViolations(lits)
}

func write(path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o644)
}
