package chart_test

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
)

// envOf maps each exporter.* value to the variable it renders. Every
// variable of config.Vars() must appear here, and every exporter.* key of
// values.yaml too (bearerTokenExistingSecret renders KUBECOST_BEARER_TOKEN_FILE).
var envOf = map[string]string{
	"clusterId":                 "CLUSTER_ID",
	"clusterArns":               "CLUSTER_ARNS",
	"clusterMapConfigMap":       "CLUSTER_MAP_FILE",
	"failOnUnmappedClusters":    "FAIL_ON_UNMAPPED_CLUSTERS",
	"clusterFilter":             "KUBECOST_CLUSTER_FILTER",
	"s3BucketName":              "S3_BUCKET_NAME",
	"objectStoreExistingSecret": "OBJECT_STORE_CONFIG_FILE",
	"s3Prefix":                  "S3_PREFIX",
	"kubecostApiEndpoint":       "KUBECOST_API_ENDPOINT",
	"kubecostNamespace":         "KUBECOST_NAMESPACE",
	"kubecostRelease":           "KUBECOST_RELEASE",
	"kubecostApiFlavor":         "KUBECOST_API_FLAVOR",
	"kubecostApiPath":           "KUBECOST_API_PATH",
	"backfillPeriodDays":        "BACKFILL_PERIOD_DAYS",
	"settleHours":               "SETTLE_HOURS",
	"backfillAllAvailable":      "BACKFILL_ALL_AVAILABLE",
	"backfillMaxDays":           "BACKFILL_MAX_DAYS",
	"maxClusterDaysPerRun":      "MAX_CLUSTER_DAYS_PER_RUN",
	"runBudget":                 "RUN_BUDGET",
	"aggregation":               "AGGREGATION",
	"granularity":               "GRANULARITY",
	"paginate":                  "KUBECOST_ALLOCATION_API_PAGINATE",
	"connectionTimeout":         "CONNECTION_TIMEOUT",
	"readTimeout":               "KUBECOST_ALLOCATION_API_READ_TIMEOUT",
	"tlsVerify":                 "TLS_VERIFY",
	"maxRetries":                "KUBECOST_MAX_RETRIES",
	"maxValueBytes":             "MAX_VALUE_BYTES",
	"caCertificateSecretName":   "KUBECOST_CA_CERTIFICATE_SECRET_NAME",
	"caCertificateSecretRegion": "KUBECOST_CA_CERTIFICATE_SECRET_REGION",
	"bearerTokenFile":           "KUBECOST_BEARER_TOKEN_FILE",
	"bearerTokenSecretName":     "KUBECOST_BEARER_TOKEN_SECRET_NAME",
	"bearerTokenExistingSecret": "KUBECOST_BEARER_TOKEN_FILE",
	"httpHeadersExistingSecret": "KUBECOST_HTTP_HEADERS_FILE",
	"irsaParentRoleArn":         "IRSA_PARENT_IAM_ROLE_ARN",
	"expectedBucketOwner":       "S3_EXPECTED_BUCKET_OWNER",
	"sse":                       "S3_SSE",
	"sseKmsKeyId":               "S3_SSE_KMS_KEY_ID",
	"s3PartSizeMiB":             "S3_PART_SIZE_MIB",
	"s3RequestTimeout":          "S3_REQUEST_TIMEOUT",
	"labels":                    "LABELS",
	"annotations":               "ANNOTATIONS",
	"outputDir":                 "OUTPUT_DIR",
	"compression":               "COMPRESSION",
	"concurrency":               "CONCURRENCY",
	"dryRun":                    "DRY_RUN",
	"forceDates":                "FORCE_DATES",
	"reexportOnConfigChange":    "REEXPORT_ON_CONFIG_CHANGE",
	"driftTolerance":            "DRIFT_TOLERANCE",
	"reexportLegacy":            "REEXPORT_LEGACY",
	"logLevel":                  "LOG_LEVEL",
	"logFormat":                 "LOG_FORMAT",
	"pushgatewayUrl":            "PUSHGATEWAY_URL",
}

// exporterAccepts runs the exporter's own validation over env.
func exporterAccepts(env map[string]string) error {
	_, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	return err
}

func TestLintStrict(t *testing.T) {
	t.Parallel()
	runs := [][]string{{"lint", "--strict", "."}}
	for _, f := range fixtures(t, "ci/*-values.yaml", 1) {
		runs = append(runs, []string{"lint", "--strict", ".", "--values", f})
	}
	for _, args := range runs {
		if out, stderr, err := runHelm(t, args...); err != nil {
			t.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
	}
}

// TestCIFixturesRender renders every chart-testing fixture, decodes every
// document strictly, and hands the rendered environment to the exporter's
// own validation: whatever the chart renders, the exporter accepts.
func TestCIFixturesRender(t *testing.T) {
	t.Parallel()
	helm(t) // skip or fail once, not per fixture
	for _, f := range fixtures(t, "ci/*-values.yaml", 4) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			r := render(t, "--values", f)
			values := readValues(t, f)
			for _, o := range r.objects {
				if o.Namespace != namespace {
					t.Errorf("%s %s: namespace %q, want the release namespace %q", o.Kind, o.Name, o.Namespace, namespace)
				}
				for _, l := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "app.kubernetes.io/component", "helm.sh/chart"} {
					if o.Labels[l] == "" {
						t.Errorf("%s %s: label %s missing", o.Kind, o.Name, l)
					}
				}
			}
			sa := dig(values, "serviceAccount", "create")
			if wantSA := sa == nil || sa == true; wantSA != (len(r.serviceAccounts) == 1) {
				t.Errorf("serviceAccount.create=%v but %d ServiceAccounts rendered", sa, len(r.serviceAccounts))
			}
			job := dig(values, "exportJob", "enabled")
			if wantJob := job == nil || job == true; wantJob != (r.exportJob(t) != nil) {
				t.Errorf("exportJob.enabled=%v but export Job rendered: %v", job, r.exportJob(t) != nil)
			}
			for kind, spec := range r.podSpecs(t) {
				env := withSecretContent(envMap(t, exporterContainer(t, spec)))
				if err := exporterAccepts(env); err != nil {
					t.Errorf("%s: the exporter rejects the rendered environment: %v", kind, err)
				}
			}
		})
	}
}

// TestInvalidFixtures checks that every fixture in tests/invalid fails to
// render, with the message named on its first line ("# want: ...").
func TestInvalidFixtures(t *testing.T) {
	t.Parallel()
	helm(t) // skip or fail once, not per fixture
	for _, f := range fixtures(t, "tests/invalid/*.yaml", 8) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(b), "\n")
			want, ok := strings.CutPrefix(first, "# want: ")
			if !ok || want == "" {
				t.Fatalf("first line must be '# want: <part of the error>', got %q", first)
			}
			out, stderr, err := runHelm(t, templateArgs("--values", f)...)
			if err == nil {
				t.Fatalf("helm template accepted the invalid values:\n%s", out)
			}
			if !strings.Contains(stderr, want) {
				t.Errorf("error does not mention %q:\n%s", want, stderr)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	r := render(t, required...)
	cj := r.cronJob(t)
	s := cj.Spec
	if s.Schedule != "0 0 * * *" || s.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("schedule %q, concurrencyPolicy %q; want 0 0 * * * and Forbid", s.Schedule, s.ConcurrencyPolicy)
	}
	js := s.JobTemplate.Spec
	for name, set := range map[string]bool{
		"startingDeadlineSeconds":    s.StartingDeadlineSeconds != nil,
		"successfulJobsHistoryLimit": s.SuccessfulJobsHistoryLimit != nil,
		"failedJobsHistoryLimit":     s.FailedJobsHistoryLimit != nil,
		"backoffLimit":               js.BackoffLimit != nil,
		"activeDeadlineSeconds":      js.ActiveDeadlineSeconds != nil,
	} {
		if !set {
			t.Errorf("CronJob %s is not set", name)
		}
	}
	for kind, spec := range r.podSpecs(t) {
		c := exporterContainer(t, spec)
		want := map[string]string{"CLUSTER_ID": clusterARN, "S3_BUCKET_NAME": bucket, "LOG_FORMAT": "json"}
		if kind == "Job" {
			// The first export takes every day the server still holds,
			// within a budget below the Job's deadline (exportJob.*).
			want["BACKFILL_ALL_AVAILABLE"], want["RUN_BUDGET"] = "true", "50m"
		}
		if got := envMap(t, c); !maps.Equal(got, want) {
			t.Errorf("%s env = %v, want only the required values and LOG_FORMAT=json: %v", kind, got, want)
		}
		if c.Image != "ghcr.io/kubecost-s3-exporter/kubecost-s3-exporter:0.1.0" {
			t.Errorf("%s image %q, want the tag to default to appVersion 0.1.0", kind, c.Image)
		}
		if len(c.Args) != 0 || len(c.Command) != 0 {
			t.Errorf("%s: command %q args %q, want the image's default (run)", kind, c.Command, c.Args)
		}
		if spec.ServiceAccountName != "kubecost-s3-exporter" {
			t.Errorf("%s serviceAccountName %q", kind, spec.ServiceAccountName)
		}
	}
}

// TestChartDefaultsMatchExporter checks values.yaml against config.Vars():
// each exporter.* default is the exporter's default (LOG_FORMAT excepted:
// json in a pod), and the envOf table covers both sides.
func TestChartDefaultsMatchExporter(t *testing.T) {
	values := readValues(t, "values.yaml")["exporter"].(map[string]any)
	vars := map[string]config.Var{}
	for _, v := range config.Vars() {
		vars[v.Name] = v
	}
	covered := map[string]bool{}
	for key, def := range values {
		name, ok := envOf[key]
		if !ok {
			t.Errorf("values.yaml exporter.%s renders no known variable; add it to envOf", key)
			continue
		}
		covered[name] = true
		v, ok := vars[name]
		if !ok {
			t.Errorf("exporter.%s maps to %s, which config.Vars() does not know", key, name)
			continue
		}
		got := renderScalar(def)
		switch {
		case key == "bearerTokenExistingSecret" || key == "httpHeadersExistingSecret" || key == "objectStoreExistingSecret" || key == "logFormat" || key == "clusterArns" || key == "clusterMapConfigMap":
		case got != v.Default:
			t.Errorf("values.yaml exporter.%s = %q, but the exporter's default for %s is %q", key, got, name, v.Default)
		}
	}
	for name := range vars {
		if !covered[name] {
			t.Errorf("%s has no value under exporter in values.yaml", name)
		}
	}
	if values["logFormat"] != "json" {
		t.Errorf("exporter.logFormat defaults to %v, want json", values["logFormat"])
	}
}

// TestEveryVariableReachable renders full-values.yaml, where every value
// differs from its default, and checks that the typed env is exactly
// config.Vars(). The bearer token sources exclude each other, so the file
// is reached in a second rendering.
func TestEveryVariableReachable(t *testing.T) {
	t.Parallel()
	extra := map[string]bool{}
	for _, e := range readValues(t, "ci/full-values.yaml")["extraEnv"].([]any) {
		extra[e.(map[string]any)["name"].(string)] = true
	}
	got := map[string]bool{}
	for _, args := range [][]string{
		{"--values", "ci/full-values.yaml"},
		{"--values", "ci/full-values.yaml", "--set", "exporter.bearerTokenSecretName=", "--set", "exporter.bearerTokenExistingSecret.name=token"},
		// The headers file comes from a Secret only (headers_test.go).
		{"--values", "ci/full-values.yaml", "--set", "exporter.httpHeadersExistingSecret.name=kubecost-api-key"},
		// The federated map, inline or from a ConfigMap, instead of clusterId.
		{"--values", "ci/full-values.yaml", "--set", "exporter.clusterId=", "--set", "exporter.clusterArns.prod-eu-1=arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu"},
		{"--values", "ci/full-values.yaml", "--set", "exporter.clusterId=", "--set", "exporter.clusterMapConfigMap.name=fleet"},
		{"--values", "ci/full-values.yaml", "--set", "exporter.objectStoreExistingSecret.name=kubecost-object-store"},
	} {
		for name := range envMap(t, exporterContainer(t, r(t, args).podSpecs(t)["CronJob"])) {
			if !extra[name] {
				got[name] = true
			}
		}
	}
	var want []string
	for _, v := range config.Vars() {
		want = append(want, v.Name)
		if !got[v.Name] {
			t.Errorf("%s is not reachable from values", v.Name)
		}
	}
	for name := range got {
		// RUN_ID is the pod's own Job name (downward API), read by
		// exporter/metrics even when the configuration is invalid.
		if !slices.Contains(want, name) && name != metrics.RunIDVar {
			t.Errorf("the chart renders %s, which config.Vars() does not know", name)
		}
	}
}

func r(t *testing.T, args []string) *rendered { t.Helper(); return render(t, args...) }

func TestSecurityContext(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t, "ci/*-values.yaml", 1) {
		rd := render(t, "--values", f)
		for kind, spec := range rd.podSpecs(t) {
			where := filepath.Base(f) + " " + kind
			checkPodHardening(t, where, spec)
		}
		for _, sa := range rd.serviceAccounts {
			if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
				t.Errorf("%s: ServiceAccount automountServiceAccountToken must be false", f)
			}
		}
	}
}

func checkPodHardening(t *testing.T, where string, spec *corev1.PodSpec) {
	t.Helper()
	errorf := func(format string, args ...any) { t.Errorf(where+": "+format, args...) }
	p := spec.SecurityContext
	if p == nil || !isTrue(p.RunAsNonRoot) || !is(p.RunAsUser, 65532) || !is(p.RunAsGroup, 65532) ||
		p.SeccompProfile == nil || p.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		errorf("pod securityContext %+v: want runAsNonRoot, UID/GID 65532, seccomp RuntimeDefault", p)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		errorf("automountServiceAccountToken must be false (EKS projects the IRSA token itself)")
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		errorf("restartPolicy %q, want Never", spec.RestartPolicy)
	}
	c := exporterContainer(t, spec)
	s := c.SecurityContext
	if s == nil || !isTrue(s.RunAsNonRoot) || !is(s.RunAsUser, 65532) || !is(s.RunAsGroup, 65532) ||
		!isTrue(s.ReadOnlyRootFilesystem) || s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation ||
		s.Capabilities == nil || !slices.Equal(s.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(s.Capabilities.Add) != 0 ||
		s.SeccompProfile == nil || s.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		errorf("container securityContext %+v is not hardened", s)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if c.Resources.Requests.Name(r, "").IsZero() || c.Resources.Limits.Name(r, "").IsZero() {
			errorf("resources %+v: want requests and limits for %s", c.Resources, r)
		}
	}
	var tmp *corev1.Volume
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == "tmp" {
			tmp = &spec.Volumes[i]
		}
	}
	if tmp == nil || tmp.EmptyDir == nil || tmp.EmptyDir.SizeLimit == nil || tmp.EmptyDir.SizeLimit.IsZero() {
		errorf("want a tmp emptyDir volume with a sizeLimit, got %+v", tmp)
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "tmp" && m.MountPath == "/tmp" }) {
		errorf("tmp is not mounted at /tmp: %+v", c.VolumeMounts)
	}
}

var hexRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestExportJob checks the rendered export Job: a plain resource (no helm or
// ArgoCD hook, so nothing waits for it), named by the hash of its spec, with
// a written-out selector (so --force can replace it) and the pod
// anti-affinity that keeps exports of one release from overlapping. Its
// behaviour on a cluster is TestExportJobOnControlPlane's.
func TestExportJob(t *testing.T) {
	t.Parallel()
	rd := render(t, required...)
	job := rd.exportJob(t)
	if job == nil {
		t.Fatal("no export Job rendered by default")
	}
	checkPlainJob(t, "default", job)
	hash := job.Annotations["checksum/export-job"]
	if !hexRE.MatchString(hash) {
		t.Fatalf("checksum/export-job %q is not a sha256", hash)
	}
	if want := "kubecost-s3-exporter-export-" + hash[:10]; job.Name != want {
		t.Errorf("Job name %q, want %q", job.Name, want)
	}
	cj := rd.cronJob(t)
	if cj.Annotations["checksum/export-job"] != hash {
		t.Errorf("the CronJob records export hash %q, the Job has %q", cj.Annotations["checksum/export-job"], hash)
	}
	sum := job.Annotations["checksum/config"]
	if !hexRE.MatchString(sum) || job.Spec.Template.Annotations["checksum/config"] != sum || cj.Annotations["checksum/config"] != sum ||
		cj.Spec.JobTemplate.Spec.Template.Annotations["checksum/config"] != sum {
		t.Error("the Job, its pod, the CronJob and its pods must carry the same checksum/config")
	}
	if job.Spec.TTLSecondsAfterFinished == nil || *job.Spec.TTLSecondsAfterFinished <= 0 {
		t.Error("the export Job needs ttlSecondsAfterFinished by default")
	}
	if job.Spec.ActiveDeadlineSeconds == nil || job.Spec.BackoffLimit == nil {
		t.Error("the export Job needs activeDeadlineSeconds and backoffLimit")
	}
	pfp := job.Spec.PodFailurePolicy
	if pfp == nil || len(pfp.Rules) == 0 || pfp.Rules[0].Action != batchv1.PodFailurePolicyActionFailJob ||
		!slices.Equal(pfp.Rules[0].OnExitCodes.Values, []int32{2}) {
		t.Errorf("podFailurePolicy %+v: a configuration error (exit 2) must fail the Job without retries", pfp)
	}
	for kind, spec := range rd.podSpecs(t) {
		checkExclusive(t, kind, spec, "kubernetes.io/os", 1)
	}
	for _, tmpl := range []*corev1.PodTemplateSpec{&job.Spec.Template, &cj.Spec.JobTemplate.Spec.Template} {
		if _, ok := tmpl.Labels["helm.sh/chart"]; ok {
			t.Error("pod templates must not carry helm.sh/chart: a chart upgrade alone would change the immutable Job template")
		}
	}

	// ArgoCD: the documented values keep the finished Job (no TTL), so the
	// application stays in sync; the Job is in the last sync wave.
	argo := render(t, "--values", "ci/argocd-values.yaml").exportJob(t)
	checkPlainJob(t, "argocd", argo)
	if argo.Spec.TTLSecondsAfterFinished != nil {
		t.Errorf("argocd fixture: ttlSecondsAfterFinished %d, want none", *argo.Spec.TTLSecondsAfterFinished)
	}
	for _, o := range render(t, "--values", "ci/argocd-values.yaml").objects {
		if w := o.Annotations["argocd.argoproj.io/sync-wave"]; o.Kind != "Job" && w != "" && w >= argo.Annotations["argocd.argoproj.io/sync-wave"] {
			t.Errorf("%s %s is in sync wave %s, not before the export Job's", o.Kind, o.Name, w)
		}
	}

	// The user's affinity is kept and the exclusive-run term added to it.
	merged := render(t, withRequired("--set-json", `affinity={"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"x":"y"}},"topologyKey":"zone"}]},"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"Exists"}]}]}}}`,
		"--set", "exclusiveRuns.topologyKey=topology.kubernetes.io/region")...)
	for kind, spec := range merged.podSpecs(t) {
		checkExclusive(t, kind, spec, "topology.kubernetes.io/region", 2)
		if spec.Affinity.NodeAffinity == nil {
			t.Errorf("%s: the user's nodeAffinity was dropped", kind)
		}
	}
	for kind, spec := range render(t, withRequired("--set", "exclusiveRuns.enabled=false")...).podSpecs(t) {
		if spec.Affinity != nil {
			t.Errorf("%s: exclusiveRuns.enabled=false still renders affinity %+v", kind, spec.Affinity)
		}
	}

	if render(t, withRequired("--set", "exportJob.enabled=false")...).exportJob(t) != nil {
		t.Error("exportJob.enabled=false still renders the Job")
	}
	// Without cluster access (helm template, ArgoCD) lookup finds nothing, so
	// an upgrade renders the Job: with an unchanged spec it is the same Job.
	if up := render(t, withRequired("--is-upgrade")...).exportJob(t); up == nil || up.Name != job.Name {
		t.Error("an upgrade without cluster access must render the same Job")
	}
}

// checkPlainJob: no hook annotation of helm or ArgoCD (both wait for hooks),
// and a selector written out that the pod template satisfies.
func checkPlainJob(t *testing.T, where string, job *batchv1.Job) {
	t.Helper()
	for _, a := range []string{"helm.sh/hook", "argocd.argoproj.io/hook", "helm.sh/hook-delete-policy", "argocd.argoproj.io/hook-delete-policy"} {
		if v, ok := job.Annotations[a]; ok {
			t.Errorf("%s: export Job has %s=%s; hooks make helm and ArgoCD wait for the backfill", where, a, v)
		}
	}
	if job.Annotations["argocd.argoproj.io/sync-wave"] != "1" {
		t.Errorf("%s: argocd.argoproj.io/sync-wave %q, want \"1\"", where, job.Annotations["argocd.argoproj.io/sync-wave"])
	}
	if !isTrue(job.Spec.ManualSelector) || job.Spec.Selector == nil || job.Spec.Selector.MatchLabels["kubecost-s3-exporter/export-job"] != job.Name {
		t.Fatalf("%s: want manualSelector and a selector on kubecost-s3-exporter/export-job=%s, got %+v", where, job.Name, job.Spec.Selector)
	}
	for k, v := range job.Spec.Selector.MatchLabels {
		if job.Spec.Template.Labels[k] != v {
			t.Errorf("%s: selector %s=%s does not match the pod template's labels", where, k, v)
		}
	}
}

// checkExclusive finds the required pod anti-affinity term against the
// release's export pods among the want terms of spec.
func checkExclusive(t *testing.T, kind string, spec *corev1.PodSpec, topologyKey string, want int) {
	t.Helper()
	if spec.Affinity == nil || spec.Affinity.PodAntiAffinity == nil {
		t.Fatalf("%s: no pod anti-affinity", kind)
	}
	terms := spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(terms) != want {
		t.Errorf("%s: %d required anti-affinity terms, want %d", kind, len(terms), want)
	}
	ours := terms[len(terms)-1]
	sel := map[string]string{"app.kubernetes.io/name": "kubecost-s3-exporter", "app.kubernetes.io/instance": release}
	if ours.TopologyKey != topologyKey || ours.LabelSelector == nil || !maps.Equal(ours.LabelSelector.MatchLabels, sel) {
		t.Errorf("%s: anti-affinity term %+v, want topologyKey %s and labels %v", kind, ours, topologyKey, sel)
	}
}

// TestExportJobName: the Job name changes with the Job's immutable spec, and
// only then; CronJob-only settings and Job metadata leave it alone.
func TestExportJobName(t *testing.T) {
	t.Parallel()
	name := func(args ...string) string {
		t.Helper()
		return render(t, withRequired(args...)...).exportJob(t).Name
	}
	base := name()
	if again := name(); again != base {
		t.Errorf("two renderings of the same values differ: %s, %s", base, again)
	}
	same := map[string][]string{
		"explicit defaults": {"--set", "exporter.backfillPeriodDays=15", "--set", "exporter.aggregation=container", "--set", "exporter.tlsVerify=true"},
		"schedule":          {"--set", "cronJob.schedule=@hourly"},
		"job annotations":   {"--set", "exportJob.annotations.x=y"},
		"another namespace": {"--namespace", "other"},
		"CronJob settings":  {"--set", "cronJob.backoffLimit=5", "--set", "cronJob.activeDeadlineSeconds=600"},
		"the TTL":           {"--set", "exportJob.ttlSecondsAfterFinished=60"},
		"the sync wave":     {"--set", "exportJob.argocdSyncWave=5"},
	}
	for what, args := range same {
		if got := name(args...); got != base {
			t.Errorf("changing %s changed the Job name: %s -> %s", what, base, got)
		}
	}
	changed := map[string][]string{
		"a new label":    {"--set-json", `exporter.labels=["team"]`},
		"the bucket":     {"--set", "exporter.s3BucketName=other-bucket"},
		"the cluster":    {"--set", "exporter.clusterId=arn:aws:eks:us-east-1:111122223333:cluster/new"},
		"the backfill":   {"--set", "exporter.backfillPeriodDays=20"},
		"the image":      {"--set", "image.tag=0.2.0"},
		"extraEnv":       {"--set", "extraEnv[0].name=AWS_ENDPOINT_URL_S3", "--set", "extraEnv[0].value=http://minio:9000"},
		"the bearer key": {"--set", "exporter.bearerTokenExistingSecret.name=t"},
		"resources":      {"--set", "resources.limits.memory=2Gi"},
		"scheduling":     {"--set", "nodeSelector.role=batch"},
		"the deadline":   {"--set", "exportJob.activeDeadlineSeconds=7200"},
	}
	seen := map[string]string{base: "defaults"}
	for what, args := range changed {
		got := name(args...)
		if prev, dup := seen[got]; dup {
			t.Errorf("changing %s gave the same Job name as %s: %s", what, prev, got)
		}
		seen[got] = what
	}
}

func TestServiceAccount(t *testing.T) {
	t.Parallel()
	role := "arn:aws:iam::111122223333:role/kubecost-s3-exporter"
	rd := render(t, withRequired("--set", "serviceAccount.roleArn="+role, "--set", "serviceAccount.annotations.x=y")...)
	if len(rd.serviceAccounts) != 1 {
		t.Fatalf("want 1 ServiceAccount, got %d", len(rd.serviceAccounts))
	}
	sa := rd.serviceAccounts[0]
	if sa.Namespace != namespace || sa.Annotations["eks.amazonaws.com/role-arn"] != role || sa.Annotations["x"] != "y" {
		t.Errorf("ServiceAccount %s/%s annotations %v", sa.Namespace, sa.Name, sa.Annotations)
	}
	for kind, spec := range rd.podSpecs(t) {
		if spec.ServiceAccountName != sa.Name {
			t.Errorf("%s uses %q, not the chart's ServiceAccount %q", kind, spec.ServiceAccountName, sa.Name)
		}
	}
	for want, args := range map[string][]string{
		"existing": {"--set", "serviceAccount.create=false", "--set", "serviceAccount.name=existing"},
		"default":  {"--set", "serviceAccount.create=false"},
	} {
		rd := render(t, withRequired(args...)...)
		if len(rd.serviceAccounts) != 0 {
			t.Errorf("serviceAccount.create=false still renders a ServiceAccount")
		}
		for kind, spec := range rd.podSpecs(t) {
			if spec.ServiceAccountName != want {
				t.Errorf("%s serviceAccountName %q, want %q", kind, spec.ServiceAccountName, want)
			}
		}
	}
}

func TestImageAndNames(t *testing.T) {
	t.Parallel()
	digest := "sha256:" + strings.Repeat("ab", 32)
	rd := render(t, withRequired("--set", "image.digest="+digest, "--set", "image.tag=9.9.9")...)
	for kind, spec := range rd.podSpecs(t) {
		if c := exporterContainer(t, spec); c.Image != "ghcr.io/kubecost-s3-exporter/kubecost-s3-exporter@"+digest {
			t.Errorf("%s image %q, want the digest to win", kind, c.Image)
		}
	}
	long := strings.Repeat("a", 63)
	rd = render(t, withRequired("--set", "fullnameOverride="+long)...)
	dns := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	if n := rd.cronJob(t).Name; len(n) > 52 || !dns.MatchString(n) {
		t.Errorf("CronJob name %q: want a DNS label of at most 52 characters", n)
	}
	if n := rd.exportJob(t).Name; len(n) > 63 || !dns.MatchString(n) || !strings.Contains(n, "-export-") {
		t.Errorf("Job name %q: want <name>-export-<sum>, a DNS label of at most 63 characters", n)
	}
}

// TestHelmignore packages the chart and checks that the Go tests and the
// fixtures under tests/ stay out of it.
func TestHelmignore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, stderr, err := runHelm(t, "package", ".", "--destination", dir); err != nil {
		t.Fatalf("helm package: %v\n%s", err, stderr)
	}
	f, err := os.Open(filepath.Join(dir, "kubecost-s3-exporter-0.1.0.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if strings.HasSuffix(h.Name, ".go") || strings.Contains(h.Name, "/tests/") {
			t.Errorf("the package contains %s", h.Name)
		}
	}
	for _, want := range []string{"values.schema.json", "README.md", "ci/default-values.yaml", "templates/cronjob.yaml"} {
		if !slices.Contains(names, "kubecost-s3-exporter/"+want) {
			t.Errorf("the package misses %s: %v", want, names)
		}
	}
}
