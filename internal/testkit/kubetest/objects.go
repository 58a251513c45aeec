package kubetest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Do sends one API request as the admin; in and out are JSON-encoded.
func (c *Cluster) Do(t testing.TB, method, path string, in, out any) error {
	t.Helper()
	return c.api.do(t.Context(), method, path, in, out)
}

// Must is Do that fails the test on an error.
func (c *Cluster) Must(t testing.TB, method, path string, in, out any) {
	t.Helper()
	if err := c.Do(t, method, path, in, out); err != nil {
		t.Fatal(err)
	}
}

// CreateNamespace creates a namespace.
func (c *Cluster) CreateNamespace(t testing.TB, name string) {
	t.Helper()
	ns := corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Must(t, http.MethodPost, "/api/v1/namespaces", ns, nil)
}

// AddNode registers a Ready Linux node with room for a few pods, so the
// scheduler has somewhere to bind pods. No kubelet runs behind it.
func (c *Cluster) AddNode(t testing.TB, name string) {
	t.Helper()
	room := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("8"),
		corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
		}},
	}
	c.Must(t, http.MethodPost, "/api/v1/nodes", node, &node)
	node.Status = corev1.NodeStatus{
		Capacity: room, Allocatable: room,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
	}
	c.Must(t, http.MethodPut, "/api/v1/nodes/"+name+"/status", node, nil)
}

// Jobs lists the Jobs in ns matching the label selector ("" for all).
func (c *Cluster) Jobs(t testing.TB, ns, selector string) []batchv1.Job {
	t.Helper()
	var l batchv1.JobList
	c.Must(t, http.MethodGet, "/apis/batch/v1/namespaces/"+ns+"/jobs"+query(selector), nil, &l)
	return l.Items
}

// Pods lists the pods in ns matching the label selector ("" for all).
func (c *Cluster) Pods(t testing.TB, ns, selector string) []corev1.Pod {
	t.Helper()
	var l corev1.PodList
	c.Must(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/pods"+query(selector), nil, &l)
	return l.Items
}

// FinishPod does the kubelet's part when a container exits 0: the pod
// becomes Succeeded, so the Job controller completes its Job.
// The controllers update the pod too, so a stale read is retried.
func (c *Cluster) FinishPod(t testing.TB, ns, name string) {
	t.Helper()
	for try := 0; ; try++ {
		err := c.finishPod(t, ns, name)
		var ae *APIError
		if err == nil || !errors.As(err, &ae) || ae.Code != http.StatusConflict || try == 10 {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}

func (c *Cluster) finishPod(t testing.TB, ns, name string) error {
	t.Helper()
	var pod corev1.Pod
	path := "/api/v1/namespaces/" + ns + "/pods/" + name
	if err := c.Do(t, http.MethodGet, path, nil, &pod); err != nil {
		return err
	}
	now := metav1.Now()
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now})
	for _, ctr := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, ImageID: ctr.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
		})
	}
	return c.Do(t, http.MethodPut, path+"/status", pod, nil)
}

// ForceDeletePod does the kubelet's part after a graceful delete: a pod
// bound to a node stays Terminating until the kubelet confirms it is gone.
func (c *Cluster) ForceDeletePod(t testing.TB, ns, name string) {
	t.Helper()
	err := c.Do(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods/"+name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, nil)
	if err != nil && !IsNotFound(err) {
		t.Fatal(err)
	}
}

// Eventually polls cond every 200 ms until it returns true or timeout
// passes; then it fails the test with the last reason cond gave.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still not %s: %s", timeout, what, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func query(selector string) string {
	if selector == "" {
		return ""
	}
	return "?" + url.Values{"labelSelector": {selector}}.Encode()
}

// JobFinished reports whether a Job has a Complete or Failed condition.
func JobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// String names a pod with its phase and node, for failure messages.
func PodString(p *corev1.Pod) string {
	return fmt.Sprintf("%s(%s,node=%q,deleting=%v)", p.Name, p.Status.Phase, p.Spec.NodeName, p.DeletionTimestamp != nil)
}
