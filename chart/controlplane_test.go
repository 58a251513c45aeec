package chart_test

// The export Job's behaviour on a real control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler; no kubelet) with the real helm.
// Every row of the table in README.md, "The export Job and upgrades", is
// checked here. Without a kubelet no pod ever runs: an export stays
// "running" (its pod Pending on a fake node) until the test finishes its pod
// the way a kubelet would, which is exactly a backfill longer than helm's
// timeout.

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubetest"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// settle bounds every wait for a controller (Job, scheduler, GC, TTL): they
// react within a second or two, but CI machines are slow and shared.
const settle = 60 * time.Second

// kube is one control plane shared by the rows, each in its own namespace.
type kube struct {
	*kubetest.Cluster
	home string // helm's config, cache and data
}

func startKube(t *testing.T) *kube {
	t.Helper()
	helm(t) // skip (or fail in CI) before the slow start when helm is missing
	c := kubetest.Start(t)
	c.AddNode(t, "node-a")
	return &kube{Cluster: c, home: t.TempDir()}
}

// helm runs helm against the control plane; it fails the test on an error
// unless wantErr.
func (k *kube) helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := k.helmErr(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// helmErr runs helm against the control plane and returns its output and
// error.
func (k *kube) helmErr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helm(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+k.Kubeconfig,
		"HELM_CONFIG_HOME="+filepath.Join(k.home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(k.home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(k.home, "data"),
	)
	err := cmd.Run()
	return out.String(), err
}

// helmRelease installs and upgrades one release of the chart in its namespace.
type helmRelease struct {
	k      *kube
	name   string
	ns     string
	values []string // --set flags of the current configuration
	// shortTTL: the TTL controller may delete a finished Job before the
	// test sees it complete (it deletes only finished Jobs).
	shortTTL bool
}

func (k *kube) newRelease(t *testing.T, name string, values ...string) *helmRelease {
	t.Helper()
	k.CreateNamespace(t, name)
	return &helmRelease{k: k, name: name, ns: name, values: withRequired(values...)}
}

// install is `helm install --wait --timeout 60s`: the wait is what
// Terraform's helm_release does by default (wait = true, wait_for_jobs =
// false).
func (r *helmRelease) install(t *testing.T) {
	t.Helper()
	r.k.helm(t, append([]string{"install", r.name, ".", "-n", r.ns, "--wait", "--timeout", "60s"}, r.values...)...)
}

// upgrade returns helm's output, NOTES included.
func (r *helmRelease) upgrade(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"upgrade", r.name, ".", "-n", r.ns, "--wait", "--timeout", "60s"}, r.values...)
	return r.k.helm(t, append(args, extra...)...)
}

// The NOTES lines for each thing an upgrade can do with the export Job.
const (
	notesNew  = "exports the missing days now"
	notesKept = "no new export started"
	notesNone = "no export started. The CronJob exports at the next schedule"
)

// checkNotes: NOTES say what happened (want), and nothing else happened.
func checkNotes(t *testing.T, out, want string) {
	t.Helper()
	for _, n := range []string{notesNew, notesKept, notesNone} {
		if got := strings.Contains(out, n); got != (n == want) {
			t.Errorf("NOTES contain %q: %v, want %v\n%s", n, got, n == want, out)
		}
	}
	if !strings.Contains(out, "create job --from=cronjob/") {
		t.Errorf("NOTES do not say how to run an export now:\n%s", out)
	}
}

func (r *helmRelease) selector() string { return "app.kubernetes.io/instance=" + r.name }

// exports returns the release's export Jobs (the ones helm created; the
// CronJob's Jobs do not carry the annotation).
func (r *helmRelease) exports(t *testing.T) []batchv1.Job {
	t.Helper()
	var out []batchv1.Job
	for _, j := range r.k.Jobs(t, r.ns, r.selector()) {
		if _, ok := j.Annotations["checksum/export-job"]; ok {
			out = append(out, j)
		}
	}
	return out
}

// running waits until the release has exactly one export Job and it is
// unfinished with one pod, bound to a node by the scheduler (so it would
// run at once); it returns the Job and that pod.
func (r *helmRelease) running(t *testing.T) (batchv1.Job, corev1.Pod) {
	t.Helper()
	var job batchv1.Job
	var pod corev1.Pod
	kubetest.Eventually(t, settle, "one running export with a scheduled pod", func() (bool, string) {
		jobs := r.exports(t)
		if len(jobs) != 1 || kubetest.JobFinished(&jobs[0]) {
			return false, "export Jobs: " + jobNames(jobs)
		}
		job = jobs[0]
		pods := r.k.Pods(t, r.ns, "kubecost-s3-exporter/export-job="+job.Name)
		if len(pods) != 1 || pods[0].Spec.NodeName == "" {
			return false, "pods of " + job.Name + ": " + podNames(pods)
		}
		pod = pods[0]
		return true, ""
	})
	return job, pod
}

// finish completes the export whose pod is given, as a kubelet would when
// the exporter exits 0, and waits for the Job controller to complete the Job.
func (r *helmRelease) finish(t *testing.T, job batchv1.Job, pod corev1.Pod) {
	t.Helper()
	r.k.FinishPod(t, r.ns, pod.Name)
	kubetest.Eventually(t, settle, job.Name+" complete", func() (bool, string) {
		var j batchv1.Job
		err := r.k.Do(t, http.MethodGet, "/apis/batch/v1/namespaces/"+r.ns+"/jobs/"+job.Name, nil, &j)
		if kubetest.IsNotFound(err) && r.shortTTL {
			return true, ""
		}
		if err != nil {
			t.Fatal(err)
		}
		return kubetest.JobFinished(&j), "conditions " + conditions(&j)
	})
}

// scheduledRun creates a Job from the CronJob's template, owned by the
// CronJob, exactly as the CronJob controller (or kubectl create job --from)
// does, so the test does not wait for midnight.
func (r *helmRelease) scheduledRun(t *testing.T) batchv1.Job {
	t.Helper()
	var cj batchv1.CronJob
	r.k.Must(t, http.MethodGet, "/apis/batch/v1/namespaces/"+r.ns+"/cronjobs/"+r.name+"-kubecost-s3-exporter", nil, &cj)
	job := batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: cj.Name + "-manual", Namespace: r.ns,
			Labels: cj.Spec.JobTemplate.Labels, Annotations: cj.Spec.JobTemplate.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))},
		},
		Spec: cj.Spec.JobTemplate.Spec,
	}
	r.k.Must(t, http.MethodPost, "/apis/batch/v1/namespaces/"+r.ns+"/jobs", job, &job)
	return job
}

func TestExportJobOnControlPlane(t *testing.T) {
	k := startKube(t)

	t.Run("install returns while the export runs; no-change and --force upgrades start nothing", func(t *testing.T) {
		r := k.newRelease(t, "steady")
		r.install(t)
		first, _ := r.running(t)

		checkNotes(t, r.upgrade(t), notesKept)
		if job, _ := r.running(t); job.UID != first.UID {
			t.Errorf("a no-change upgrade replaced export %s by %s", first.Name, job.Name)
		}
		r.upgrade(t, "--force")
		job, pod := r.running(t)
		if job.Name != first.Name {
			t.Errorf("--force with an export running started %s beside %s", job.Name, first.Name)
		}
		r.finish(t, job, pod)
		r.upgrade(t, "--force")
		r.upgrade(t)
		jobs := r.exports(t)
		if len(jobs) != 1 || jobs[0].Name != first.Name || !kubetest.JobFinished(&jobs[0]) {
			t.Errorf("after --force and a plain upgrade with the export finished, want only the finished %s, got %s", first.Name, jobNames(jobs))
		}
	})

	t.Run("a configuration change supersedes the running export; runs never overlap", func(t *testing.T) {
		r := k.newRelease(t, "change")
		r.install(t)
		old, oldPod := r.running(t)

		r.values = append(r.values, "--set", "exporter.backfillPeriodDays=20")
		r.upgrade(t)
		// helm deleted the old Job; its pod is Terminating (bound to a node,
		// it waits for the kubelet), and the new export's pod must not be
		// scheduled beside it.
		var next batchv1.Job
		kubetest.Eventually(t, settle, "exactly one export, of the new configuration", func() (bool, string) {
			jobs := r.exports(t)
			if len(jobs) != 1 || jobs[0].Name == old.Name {
				return false, jobNames(jobs)
			}
			next = jobs[0]
			return true, ""
		})
		if kubetest.JobFinished(&next) {
			t.Fatalf("the new export %s is already finished", next.Name)
		}
		assertUnscheduled(t, r, "kubecost-s3-exporter/export-job="+next.Name, "while the superseded export's pod terminates")
		r.k.ForceDeletePod(t, r.ns, oldPod.Name) // the kubelet confirms the old pod is gone
		job, pod := r.running(t)
		if job.Name != next.Name {
			t.Fatalf("running export %s, want %s", job.Name, next.Name)
		}

		// The scheduled run waits for the install-time export, and the other
		// way round.
		cron := r.scheduledRun(t)
		assertUnscheduled(t, r, "job-name="+cron.Name, "while the export runs")
		r.finish(t, job, pod)
		kubetest.Eventually(t, settle, "the scheduled run's pod scheduled", func() (bool, string) {
			pods := r.k.Pods(t, r.ns, "job-name="+cron.Name)
			return len(pods) == 1 && pods[0].Spec.NodeName != "", podNames(pods)
		})
		r.values = append(r.values, "--set", "exporter.backfillPeriodDays=25")
		r.upgrade(t)
		var third batchv1.Job
		kubetest.Eventually(t, settle, "the third export created", func() (bool, string) {
			jobs := r.exports(t)
			if len(jobs) != 1 || jobs[0].Name == next.Name {
				return false, jobNames(jobs)
			}
			third = jobs[0]
			return true, ""
		})
		assertUnscheduled(t, r, "kubecost-s3-exporter/export-job="+third.Name, "while the scheduled run runs")

		// Uninstall removes everything the release created, the scheduled
		// run's Job included (the garbage collector follows its owner).
		r.k.helm(t, "uninstall", r.name, "-n", r.ns, "--wait", "--timeout", "60s")
		assertNothingLeft(t, r)
	})

	t.Run("after the TTL deleted a finished export, upgrades start nothing", func(t *testing.T) {
		r := k.newRelease(t, "ttl", "--set", "exportJob.ttlSecondsAfterFinished=1")
		r.shortTTL = true
		r.install(t)
		job, pod := r.running(t)
		r.finish(t, job, pod)
		kubetest.Eventually(t, settle, "the TTL controller deleted "+job.Name, func() (bool, string) {
			jobs := r.exports(t)
			return len(jobs) == 0, jobNames(jobs)
		})
		// NOTES must not announce the deleted Job: no export started.
		checkNotes(t, r.upgrade(t), notesNone)
		checkNotes(t, r.upgrade(t, "--force"), notesNone)
		if jobs := r.exports(t); len(jobs) != 0 {
			t.Errorf("upgrades with an unchanged configuration after the TTL started %s", jobNames(jobs))
		}
		r.values = append(r.values, "--set", "exporter.logLevel=debug")
		checkNotes(t, r.upgrade(t), notesNew)
		r.running(t) // a change still exports at once
	})

	t.Run("federated: the map reaches the export's pod, from a ConfigMap or inline", func(t *testing.T) {
		r := k.newRelease(t, "fleet", "--set", "exporter.clusterId=", "--set", "exporter.clusterMapConfigMap.name=fleet-map",
			"--set-string", "exporter.expectedBucketOwner=111122223333")
		// The user's ConfigMap, as the chart expects it to exist.
		k.Must(t, http.MethodPost, "/api/v1/namespaces/"+r.ns+"/configmaps", corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "fleet-map"},
			Data:       map[string]string{"clusters.yaml": "prod-eu-1: arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu\n"},
		}, nil)
		r.install(t)
		job, pod := r.running(t)
		c := exporterContainer(t, &pod.Spec)
		env := envMap(t, c)
		if env["CLUSTER_MAP_FILE"] != "/etc/kubecost-s3-exporter/cluster-map/clusters.yaml" || env["CLUSTER_ID"] != "" {
			t.Errorf("export pod env %v", env)
		}
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "cluster-map" && m.ReadOnly && m.MountPath == "/etc/kubecost-s3-exporter/cluster-map"
		})
		volume := slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Name == "cluster-map" && v.ConfigMap != nil && v.ConfigMap.Name == "fleet-map"
		})
		if !mounted || !volume {
			t.Errorf("ConfigMap fleet-map not mounted read-only in the export pod (mount %v, volume %v)", mounted, volume)
		}
		// Switching to the inline map is a configuration change: a new export.
		r.values = append(r.values, "--set", "exporter.clusterMapConfigMap.name=",
			"--set", "exporter.clusterArns.prod-eu-1=arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu")
		r.upgrade(t)
		kubetest.Eventually(t, settle, "one export, not "+job.Name, func() (bool, string) {
			jobs := r.exports(t)
			return len(jobs) == 1 && jobs[0].Name != job.Name && !kubetest.JobFinished(&jobs[0]), jobNames(jobs)
		})
		// The superseded export's pod is gone once a kubelet kills it; the
		// new one is scheduled only then (one export at a time).
		r.k.ForceDeletePod(t, r.ns, pod.Name)
		_, pod = r.running(t)
		if env := envMap(t, exporterContainer(t, &pod.Spec)); env["CLUSTER_ARNS"] != "prod-eu-1=arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu" || env["CLUSTER_MAP_FILE"] != "" {
			t.Errorf("export pod env after the switch %v", env)
		}
	})

	t.Run("Kubecost's bucket configuration: the existing Secret is mounted in the export's pod", func(t *testing.T) {
		r := k.newRelease(t, "store", "--set", "exporter.s3BucketName=",
			"--set", "exporter.objectStoreExistingSecret.name=kubecost-federated-store",
			"--set", "exporter.objectStoreExistingSecret.key=federated-store.yaml")
		// The Secret as Kubecost 3.x keeps it (global.federatedStorage.existingSecret).
		k.Must(t, http.MethodPost, "/api/v1/namespaces/"+r.ns+"/secrets", corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "kubecost-federated-store"},
			StringData: map[string]string{"federated-store.yaml": "type: S3\nconfig:\n  bucket: kubecost-multi-cluster-storage\n  endpoint: s3.amazonaws.com\n  region: us-west-2\n"},
		}, nil)
		r.install(t)
		job, pod := r.running(t)
		c := exporterContainer(t, &pod.Spec)
		if env := envMap(t, c); env["OBJECT_STORE_CONFIG_FILE"] != "/etc/kubecost-s3-exporter/object-store/federated-store.yaml" || env["S3_BUCKET_NAME"] != "" {
			t.Errorf("export pod env %v", env)
		}
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "object-store" && m.ReadOnly && m.MountPath == "/etc/kubecost-s3-exporter/object-store"
		})
		volume := slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Name == "object-store" && v.Secret != nil && v.Secret.SecretName == "kubecost-federated-store" &&
				len(v.Secret.Items) == 1 && v.Secret.Items[0].Key == "federated-store.yaml"
		})
		if !mounted || !volume {
			t.Errorf("Secret kubecost-federated-store not mounted read-only in the export pod (mount %v, volume %v)", mounted, volume)
		}
		if notes := r.upgrade(t); !strings.Contains(notes, "to the bucket of Secret kubecost-federated-store (federated-store.yaml)") {
			t.Errorf("NOTES do not name the Secret that holds the bucket:\n%s", notes)
		}
		r.finish(t, job, pod)
	})

	t.Run("user metadata on chart keys: one key, the user's value; checksums not overridable", func(t *testing.T) {
		r := k.newRelease(t, "meta", userOnChartKeys...)
		r.install(t)
		job, pod := r.running(t)
		var cj batchv1.CronJob
		r.k.Must(t, http.MethodGet, "/apis/batch/v1/namespaces/"+r.ns+"/cronjobs/"+r.name+"-kubecost-s3-exporter", nil, &cj)
		if job.Annotations["argocd.argoproj.io/sync-wave"] != "3" || job.Annotations["team"] != "cost" || cj.Annotations["team"] != "cost" {
			t.Errorf("live annotations: Job %v, CronJob %v", job.Annotations, cj.Annotations)
		}
		if pod.Labels["app.kubernetes.io/part-of"] != "finops" || pod.Labels["team"] != "cost" || pod.Annotations["team"] != "cost" {
			t.Errorf("live export pod labels %v annotations %v", pod.Labels, pod.Annotations)
		}
		if cj.Annotations["checksum/export-job"] != job.Annotations["checksum/export-job"] {
			t.Errorf("the CronJob records export hash %q, the running Job has %q", cj.Annotations["checksum/export-job"], job.Annotations["checksum/export-job"])
		}
		// A user value for a checksum is refused before anything changes,
		// so the no-change check keeps reading the chart's hash.
		for _, set := range []string{"cronJob.annotations.checksum/export-job=x", "podAnnotations.checksum/config=x"} {
			args := append([]string{"upgrade", r.name, ".", "-n", r.ns}, append(slices.Clone(r.values), "--set-string", set)...)
			out, err := r.k.helmErr(t, args...)
			if err == nil || !strings.Contains(out, "is set by the chart and cannot be overridden") {
				t.Errorf("upgrade with %s: %v\n%s", set, err, out)
			}
		}
		checkNotes(t, r.upgrade(t), notesKept)
		if jobs := r.exports(t); len(jobs) != 1 || jobs[0].UID != job.UID {
			t.Errorf("after the refused upgrades and a no-change one, want only %s, got %s", job.Name, jobNames(jobs))
		}
	})

	t.Run("skipWhenUnchanged=false: every upgrade replaces the export", func(t *testing.T) {
		r := k.newRelease(t, "every", "--set", "exportJob.skipWhenUnchanged=false")
		r.install(t)
		first, firstPod := r.running(t)
		r.upgrade(t)
		kubetest.Eventually(t, settle, "one export, not "+first.Name, func() (bool, string) {
			jobs := r.exports(t)
			return len(jobs) == 1 && jobs[0].Name != first.Name && !kubetest.JobFinished(&jobs[0]), jobNames(jobs)
		})
		r.k.ForceDeletePod(t, r.ns, firstPod.Name)
		r.running(t)
	})
}

// assertUnscheduled checks, for a few seconds, that the pod of selector
// exists and is not bound to a node: the scheduler keeps it Pending.
func assertUnscheduled(t *testing.T, r *helmRelease, selector, why string) {
	t.Helper()
	kubetest.Eventually(t, settle, "a pod for "+selector, func() (bool, string) {
		pods := r.k.Pods(t, r.ns, selector)
		return len(pods) == 1, podNames(pods)
	})
	// The scheduler decides within milliseconds; 3 s without a binding, with
	// the node free otherwise, is the anti-affinity holding.
	for range 15 {
		pods := r.k.Pods(t, r.ns, selector)
		if len(pods) != 1 || pods[0].Spec.NodeName != "" {
			t.Fatalf("%s: want one unscheduled pod %s, got %s", selector, why, podNames(pods))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// assertNothingLeft waits until no Job, CronJob, ServiceAccount, Role or
// RoleBinding is left in the release's namespace, and every pod left is
// being deleted (a kubelet would stop it).
func assertNothingLeft(t *testing.T, r *helmRelease) {
	t.Helper()
	kinds := []string{
		"/apis/batch/v1/namespaces/" + r.ns + "/jobs",
		"/apis/batch/v1/namespaces/" + r.ns + "/cronjobs",
		"/api/v1/namespaces/" + r.ns + "/serviceaccounts",
		"/apis/rbac.authorization.k8s.io/v1/namespaces/" + r.ns + "/roles",
		"/apis/rbac.authorization.k8s.io/v1/namespaces/" + r.ns + "/rolebindings",
	}
	kubetest.Eventually(t, settle, "an empty namespace after uninstall", func() (bool, string) {
		for _, path := range kinds {
			var l metav1.PartialObjectMetadataList
			r.k.Must(t, http.MethodGet, path, nil, &l)
			if len(l.Items) > 0 {
				return false, path + " still has " + l.Items[0].Name
			}
		}
		for _, p := range r.k.Pods(t, r.ns, "") {
			if p.DeletionTimestamp == nil {
				return false, "pod not being deleted: " + kubetest.PodString(&p)
			}
		}
		return true, ""
	})
}

func jobNames(jobs []batchv1.Job) string {
	var s []string
	for _, j := range jobs {
		s = append(s, j.Name+"["+conditions(&j)+"]")
	}
	return "[" + strings.Join(s, " ") + "]"
}

func podNames(pods []corev1.Pod) string {
	var s []string
	for i := range pods {
		s = append(s, kubetest.PodString(&pods[i]))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func conditions(j *batchv1.Job) string {
	var s []string
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			s = append(s, string(c.Type))
		}
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}
