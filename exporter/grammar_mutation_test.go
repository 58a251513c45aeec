package exporter_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/grammars"
)

// TestGuardCatchesMutations applies, each in a fresh copy of the
// product's Go files, a change that reads, declares or decides one of the
// destination's settings behind its back, and requires the guard of
// TestGrammarsDefinedOnce to name it; the unchanged copy must pass. The
// first four are the examples of issue 49, which the guard of spellings
// let through.
func TestGuardCatchesMutations(t *testing.T) {
	for _, m := range mutations(t) {
		got := violationsIn(t, m.files)
		if i := slices.IndexFunc(got, func(v string) bool { return strings.Contains(v, m.want) }); i < 0 {
			t.Errorf("%s: the guard does not say %s: %v", m.name, m.want, got)
		} else {
			t.Logf("%s: caught: %s", m.name, got[i])
		}
	}
	if got := violationsIn(t, nil); len(got) != 0 {
		t.Errorf("the unchanged copy fails the guard: %v", got)
	}
}

// mutation is one change to the product and what the guard must say of it.
type mutation struct {
	name  string
	files map[string]string
	want  string
}

// mutations are the changes TestGuardCatchesMutations applies.
func mutations(t *testing.T) []mutation {
	const cliFile = "exporter/cli/sneak.go"
	read := func(name string) map[string]string {
		return map[string]string{cliFile: "package cli\n\nimport \"os\"\n\nvar _, _ = os.LookupEnv(" + name + ")\n"}
	}
	cliCode := func(imports, code string) map[string]string {
		return map[string]string{cliFile: "package cli\n\nimport (\n" + imports + ")\n\n" + code + "\n"}
	}
	edit := func(file, old, new string) map[string]string {
		b, err := os.ReadFile(strings.TrimPrefix(file, "exporter/"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), old) {
			t.Fatalf("the mutation of %s no longer applies: %q is gone", file, old)
		}
		return map[string]string{file: strings.Replace(string(b), old, new, 1)}
	}
	recheck := func(check string) map[string]string {
		return edit("exporter/s3store/s3store.go", "\topts = opts.withDefaults()\n", check+"\topts = opts.withDefaults()\n")
	}
	return []mutation{
		// Issue 49's four.
		{"cli reads S3_%s_TIMEOUT formatted", cliCode("\t\"fmt\"\n\t\"os\"\n", `var _ = os.Getenv(fmt.Sprintf("S3_%s_TIMEOUT", "REQUEST"))`),
			`builds the destination variable "S3_REQUEST_TIMEOUT" from "S3_%s_TIMEOUT"`},
		{"s3store.New re-checks the part size", recheck("\tif opts.PartSize < 5<<20 {\n\t\treturn nil, errors.New(\"small\")\n\t}\n"),
			"checks the destination setting PartSize again"},
		{"s3store.New re-checks SSE", recheck("\tif opts.SSE != SSES3 && opts.SSE != SSEKMS {\n\t\treturn nil, errors.New(\"sse\")\n\t}\n"),
			"checks the destination setting SSE again"},
		{"s3store.New re-checks the KMS key", recheck("\tif !strings.HasPrefix(opts.SSEKMSKeyID, \"arn:\") {\n\t\treturn nil, errors.New(\"kms\")\n\t}\n"),
			"checks the destination setting SSEKMSKeyID again"},
		{"config.Config declares S3_USE_ACCELERATE", edit("exporter/config/config.go", "\tdestination.Settings\n",
			"\tdestination.Settings\n\tUseAccelerate Flag `env:\"S3_USE_ACCELERATE\" default:\"false\" desc:\"S3 Transfer Acceleration\"`\n"),
			`declares the destination variable "S3_USE_ACCELERATE"`},
		{"config.BillLocation declares S3_CUR_EXPECTED_BUCKET_OWNER", map[string]string{"exporter/config/sneak.go": "package config\n\n" +
			"type BillLocation struct {\n\tOwner string `env:\"S3_CUR_EXPECTED_BUCKET_OWNER\" desc:\"the CUR bucket's owner\"`\n}\n"},
			`declares the destination variable "S3_CUR_EXPECTED_BUCKET_OWNER"`},
		// Other ways of reading a destination variable.
		{"cli reads S3_REQUEST_TIMEOUT", read(`"S3_REQUEST_TIMEOUT"`), `spells the destination variable "S3_REQUEST_TIMEOUT"`},
		{"cli reads AWS_ENDPOINT_URL_S3", read(`"AWS_ENDPOINT_URL_S3"`), `"AWS_ENDPOINT_URL_S3"`},
		{"cli reads BILL_ROLE_ARN", read(`"BILL_ROLE_ARN"`), `"BILL_ROLE_ARN"`},
		{"cli reads a new S3_CA_BUNDLE", merge(read(`"S3_CA_BUNDLE"`), edit("exporter/destination/destination.go", "\tS3PartSizeMiB ",
			"\tCABundle string `env:\"S3_CA_BUNDLE\" desc:\"a CA bundle for the S3 endpoint\"`\n\tS3PartSizeMiB ")), `"S3_CA_BUNDLE"`},
		{"cli reads a new, undeclared S3_CA_BUNDLE", read(`"S3_CA_BUNDLE"`), `spells the destination variable "S3_CA_BUNDLE"`},
		{"cli builds S3_PREFIX from literals", read(`"S3_" + "PREFIX"`), `"S3_PREFIX"`},
		{"cli builds a name on S3_", read(`"S3_" + os.Args[0]`), `"S3_"`},
		{"cli reads a name it computes", read(`os.Args[1]`), "by a name that is not a constant"},
		{"cli scans the whole environment", cliCode("\t\"os\"\n", "var _ = os.Environ()"), "reads the environment (os.Environ)"},
		{"awsauth reads AWS_REGION again", map[string]string{"exporter/awsauth/sneak.go": "package awsauth\n\nimport \"os\"\n\nvar _ = os.Getenv(\"AWS_REGION\")\n"}, `"AWS_REGION"`},
		{"config declares AWS_DEFAULT_REGION", map[string]string{"exporter/config/sneak.go": "package config\n\ntype sneak struct {\n\tR string `env:\"AWS_DEFAULT_REGION\"`\n}\n"}, `"AWS_DEFAULT_REGION"`},
		{"config declares the destination's -bill-region", map[string]string{"exporter/config/sneak.go": "package config\n\ntype sneak struct {\n\tR string `flag:\"bill-region\"`\n}\n"},
			"declares the destination's flag -bill-region"},
		{"config declares a new BILL_ACCOUNT", map[string]string{"exporter/config/sneak.go": "package config\n\ntype sneak struct {\n\tA string `env:\"BILL_ACCOUNT\"`\n}\n"}, `"BILL_ACCOUNT"`},
		// Other ways of deciding a setting outside the destination.
		{"config decides the Secrets Manager region", map[string]string{"exporter/config/sneak.go": "package config\n\n" +
			"func (c *Config) SecretRegion() string {\n\tif c.CASecretRegion != \"\" {\n\t\treturn c.CASecretRegion\n\t}\n\treturn c.Home().Region\n}\n"},
			"decides a region or a timeout (func SecretRegion"},
		{"config picks the bill's region and timeout", map[string]string{"exporter/config/sneak.go": "package config\n\nimport \"cmp\"\n\n" +
			"func sneak(r *Report) { r.Bill.Dest.Region = cmp.Or(r.BillRegion, r.Settings.Region) }\n"}, "decides a region or a timeout (call cmp.Or"},
		{"cli checks the part size", cliCode("\t\"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config\"\n",
			"func sneak(c *config.Config) bool { return c.S3PartSizeMiB > 64 }"), "checks the destination setting S3PartSizeMiB again"},
		{"config compiles the region pattern", map[string]string{"exporter/config/sneak.go": "package config\n\nimport (\n\t\"regexp\"\n\n" +
			"\t\"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter\"\n)\n\nvar sneakRE = regexp.MustCompile(`^` + exporter.RegionPattern + `$`)\n"},
			"compiles the region pattern again"},
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
	fx, err := grammars.ProductFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	return destinationViolations(lits, fx)
}

func write(path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o644)
}
