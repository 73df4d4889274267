package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// noAnswer posts body to the server at path and fails the test if it is
// answered.
func noAnswer(t *testing.T, url, path string, body any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Post(url+path, "application/json", bytes.NewReader(data)); err == nil {
		_ = resp.Body.Close()
		t.Errorf("POST %s: answered %s; want no answer", path, resp.Status)
	}
}

// jobStates is each job of uid in fleet, by ID and state.
func jobStates(fleet *partsfleet.Fleet, uid string) []string {
	var states []string
	for _, s := range fleet.JobsOf(uid) {
		states = append(states, s.ID+" "+s.State.String())
	}
	return states
}

// TestSbatchLatency: with -sbatch-latency each create takes that long
// before it is answered, as the Slurm plugin runs sbatch and waits for
// it; a client that gives up first gets no answer, and the job is made
// all the same.
func TestSbatchLatency(t *testing.T) {
	server, fleet, _ := serve(t, t0, "-slurm", "-sbatch-latency", "300ms")
	began := time.Now()
	create(t, server, slurmPod("a", "", "1"))
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Errorf("a create answered in %v, want 300ms at least", took)
	}
	b := slurmPod("b", "", "1")
	impatient := &http.Client{Timeout: 50 * time.Millisecond}
	data, _ := json.Marshal(podapi.NewCreateRequest(&b))
	if resp, err := impatient.Post(server.URL+podapi.CreatePath, "application/json", bytes.NewReader(data)); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("a client that waits 50ms was answered %s", resp.Status)
	}
	for deadline := time.Now().Add(5 * time.Second); len(fleet.JobsOf("b")) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job of a create whose client gave up was never made")
		}
	}
}

// TestSbatchWarning: a pod whose sbatch flags ask fewer tasks than nodes
// (--ntasks=1 --nodes=2) makes sbatch warn on its stderr, and the Slurm
// plugin answers the create 504 with the warning, though sbatch made the
// job; the plugin does not record it by the pod's UID: the pod's status
// is that of a pod without a job, or of its earlier job, which its
// delete cancels, and a delete of a pod without one gets no answer; the
// job made runs on, holding its cpus.
func TestSbatchWarning(t *testing.T) {
	server, fleet, _ := serve(t, t0, append([]string{"-slurm", "-status-cache", "0"}, twoIdleOf4...)...)
	w := slurmPod("w", "--ntasks=1 --nodes=2", "3")
	code, body := call(t, server, http.MethodPost, podapi.CreatePath, podapi.NewCreateRequest(&w))
	if warning := "sbatch: warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"; code != http.StatusGatewayTimeout || string(body) != warning {
		t.Errorf("create: %d %q; want 504 %q", code, body, warning)
	}
	if diff := cmp.Diff([]string{"1 running"}, jobStates(fleet, "w")); diff != "" {
		t.Errorf("jobs of w (-want +got):\n%s", diff)
	}
	if _, got := pingSlurm(t, server, "[]"); got != sumReply("5", "7999Mi", false) {
		t.Errorf("ping: %s; want the job's 3 cpus and 1Mi taken, %s", got, sumReply("5", "7999Mi", false))
	}
	if diff := cmp.Diff([]podapi.PodStatus{slurmStatus(w, corev1.ContainerState{})}, statusOf(t, server, w)); diff != "" {
		t.Errorf("status of w (-want +got):\n%s", diff)
	}
	noAnswer(t, server.URL, podapi.DeletePath, w)
	if fleet.UnknownDeletes() != 1 || jobStates(fleet, "w")[0] != "1 running" {
		t.Errorf("after the delete of w: %d unknown deletes, jobs %v; want 1, and its job running", fleet.UnknownDeletes(), jobStates(fleet, "w"))
	}

	a := slurmPod("a", "", "1")
	create(t, server, a)
	again := a
	again.Annotations = map[string]string{podapi.SlurmFlags: "-n 1 -N 3"}
	if code, body := call(t, server, http.MethodPost, podapi.CreatePath, podapi.NewCreateRequest(&again)); code != http.StatusGatewayTimeout {
		t.Errorf("a second create of a, warned: %d %s; want 504", code, body)
	}
	if got := statusOf(t, server, a); got[0].Containers[0].State.Running == nil {
		t.Errorf("status of a: %+v; want its first job's, running", got)
	}
	if code, body := call(t, server, http.MethodPost, podapi.DeletePath, a); code != http.StatusOK {
		t.Fatalf("delete of a: %d %s", code, body)
	}
	if diff := cmp.Diff([]string{"2 cancelled", "3 running"}, jobStates(fleet, "a")); diff != "" {
		t.Errorf("jobs of a (-want +got):\n%s", diff)
	}
}

// TestScancelFailures: with -scancel-failures N the first N scancels
// fail: the Slurm plugin answers the delete 500 with the words of its
// failed command, "exit status 1", and keeps the job, which runs on and
// which a later delete cancels. A delete of a pod without a job runs no
// scancel, and spends none of them.
func TestScancelFailures(t *testing.T) {
	server, fleet, _ := serve(t, t0, "-slurm", "-status-cache", "0", "-scancel-failures", "1")
	a := slurmPod("a", "", "1")
	create(t, server, a)
	noAnswer(t, server.URL, podapi.DeletePath, slurmPod("never", "", "1"))
	if code, body := call(t, server, http.MethodPost, podapi.DeletePath, a); code != http.StatusInternalServerError || string(body) != "exit status 1" {
		t.Errorf("the first delete: %d %q; want 500 \"exit status 1\"", code, body)
	}
	if got := statusOf(t, server, a); got[0].Containers[0].State.Running == nil || jobStates(fleet, "a")[0] != "1 running" {
		t.Errorf("after the failed scancel: status %+v, jobs %v; want the job running", got, jobStates(fleet, "a"))
	}
	if code, body := call(t, server, http.MethodPost, podapi.DeletePath, a); code != http.StatusOK {
		t.Errorf("the second delete: %d %s; want 200", code, body)
	}
	if diff := cmp.Diff([]string{"1 cancelled"}, jobStates(fleet, "a")); diff != "" {
		t.Errorf("jobs of a (-want +got):\n%s", diff)
	}
}

// TestSlurmSizing: with -slurm a job's cpus are its containers' largest
// cpu limit, init containers among them, rounded up, and its memory
// their largest memory limit; requests count for nothing, and without
// limits it is 1 cpu and 1Mi. Both decide where it fits: a job that asks
// more memory than a machine has is refused at its create, in sbatch's
// words, and one goes to a machine with its memory free, though another
// has its cpus (the Slurm plugin's --cpus-per-task and --mem).
func TestSlurmSizing(t *testing.T) {
	server, fleet, _ := serve(t, t0, append([]string{"-slurm", "-status-cache", "0"}, twoIdleOf4...)...)
	sized := withMemory(slurmPod("sized", "", "1500m"), "3000Mi")
	sized.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resourceOf("4")}
	sized.Spec.InitContainers = []corev1.Container{{Name: "setup", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resourceOf("2")}}}}
	requested := slurmPod("requested", "", "1")
	requested.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resourceOf("3")}}
	second := withMemory(slurmPod("second", "", "1"), "2000Mi")
	create(t, server, sized)
	create(t, server, requested)
	create(t, server, second)
	if words := refusedCreate(t, server, withMemory(slurmPod("big", "", "1"), "5000Mi")); words != "sbatch: error: Batch job submission failed: "+partsfleet.RefusedTooMuchMemory {
		t.Errorf("create of 5000Mi on machines of 4000Mi: %q", words)
	}
	type size struct {
		CPUs     int
		MemoryMi int64
		Machine  string
	}
	got := map[string]size{}
	for _, s := range fleet.Jobs() {
		got[s.UID] = size{s.CPUs, s.MemoryMi, s.Machine}
	}
	want := map[string]size{"sized": {2, 3000, "cn001"}, "requested": {1, 1, "cn001"}, "second": {1, 2000, "cn002"}, "big": {1, 5000, ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	if _, got := pingSlurm(t, server, "[]"); got != sumReply("4", "2999Mi", false) {
		t.Errorf("ping: %s; want %s", got, sumReply("4", "2999Mi", false))
	}
}
