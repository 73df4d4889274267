package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/pingstatus"
)

// t0 is the fixed clock of the pod API's tests.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// testPod is a pod of one container, main, asking cpus, bound to node.
func testPod(uid, node, cpus string) corev1.Pod {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Namespace: "default", Name: "pod-" + uid},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main"}}},
	}
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus)}
	return pod
}

// bodyOf is a request's body: none for nil, a string as it is, and
// anything else as JSON.
func bodyOf(t *testing.T, body any) io.Reader {
	t.Helper()
	switch b := body.(type) {
	case nil:
		return http.NoBody
	case string:
		return strings.NewReader(b)
	}
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(data)
}

// call sends body (see bodyOf) to the server at path with method, and
// returns the answer's status code and body.
func call(t *testing.T, server *httptest.Server, method, path string, body any) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, server.URL+path, bodyOf(t, body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// statusOf asks the server for the status of pods, and decodes it.
func statusOf(t *testing.T, server *httptest.Server, pods ...corev1.Pod) []podapi.PodStatus {
	t.Helper()
	code, body := call(t, server, http.MethodGet, podapi.StatusPath, pods)
	var statuses []podapi.PodStatus
	if err := json.Unmarshal(body, &statuses); code != http.StatusOK || err != nil {
		t.Fatalf("status: %d, %v: %s", code, err, body)
	}
	return statuses
}

// strictly decodes data, one JSON value and nothing after it, into v,
// refusing a field that v has not.
func strictly(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("more after the value: %w", err)
	}
	return nil
}

// create asks the server to create pod, one podapi.CreateRequest, and
// returns the answer, which must be one podapi.Created object, strictly.
func create(t *testing.T, server *httptest.Server, pod corev1.Pod) podapi.Created {
	t.Helper()
	code, body := call(t, server, http.MethodPost, podapi.CreatePath, podapi.NewCreateRequest(&pod))
	var created podapi.Created
	if code != http.StatusOK || len(bytes.TrimSpace(body)) == 0 || bytes.TrimSpace(body)[0] != '{' {
		t.Fatalf("create %s: %d: %s; want 200 and one object", pod.UID, code, body)
	}
	if err := strictly(body, &created); err != nil {
		t.Fatalf("create %s: %v: %s", pod.UID, err, body)
	}
	return created
}

// refusedCreate creates pod, which its backend must refuse, and returns
// the words of the answer, which must be 504 in plain text, as sbatch's
// refusal is answered.
func refusedCreate(t *testing.T, server *httptest.Server, pod corev1.Pod) string {
	t.Helper()
	code, body := call(t, server, http.MethodPost, podapi.CreatePath, podapi.NewCreateRequest(&pod))
	if code != http.StatusGatewayTimeout || !strings.HasPrefix(string(body), "sbatch: error: Batch job submission failed: ") {
		t.Fatalf("create %s: %d: %s; want 504 and sbatch's refusal", pod.UID, code, body)
	}
	return string(body)
}

// podStatus is what the plugin says of pod, its job id, in state.
func podStatus(pod corev1.Pod, id string, state corev1.ContainerState) podapi.PodStatus {
	return podapi.PodStatus{
		Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace, JobID: id,
		Containers: []corev1.ContainerStatus{{Name: "main", State: state, Ready: state.Running != nil}},
	}
}

// sameInstant compares times by instant: the wire has them in seconds,
// in the local zone.
var sameInstant = cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })

// TestPodsRoundTrip: a pod created on a machine without room queues, one
// with room runs, one on no machine is refused, in sbatch's words, and
// has no job; once the running pod is
// deleted the queued one runs, from then on; a deleted pod is left out of
// the status; and the ping, with no body or an empty list, is the fleet's
// reply, its free cpus less the running pods'.
func TestPodsRoundTrip(t *testing.T) {
	var minutes atomic.Int64 // the clock, in minutes after t0
	now := func() time.Time { return t0.Add(time.Duration(minutes.Load()) * time.Minute) }
	// Seed 1: cn001 has 2 cpus free, cn002 none.
	fleet := partsfleet.New(partsfleet.Config{Machines: 2, CPUs: 4, MemoryMi: 4000, Seed: 1, Now: now})
	server := httptest.NewServer(Handler(func() Backend { return Backend{Parts: fleet.Next()} }, fleet, Options{}))
	defer server.Close()
	ping := func(body any) []pingstatus.PartResponse {
		t.Helper()
		code, data := call(t, server, http.MethodGet, podapi.StatusPath, body)
		var reply pingstatus.PingResponse
		if err := json.Unmarshal(data, &reply); code != http.StatusOK || err != nil || reply.Nodes == nil {
			t.Fatalf("ping with %v: %d, %v: %s", body, code, err, data)
		}
		return reply.Nodes
	}
	free := func(parts []pingstatus.PartResponse) []string {
		var cpus []string
		for _, p := range parts {
			if p.Resources == nil {
				cpus = append(cpus, "full")
			} else {
				cpus = append(cpus, p.Resources.CPU)
			}
		}
		return cpus
	}
	if diff := cmp.Diff([]string{"2", "full"}, free(ping(nil))); diff != "" {
		t.Fatalf("the fleet of seed 1 (-want +got):\n%s", diff)
	}

	a, b, c, d := testPod("a", "vk-cn001", "2"), testPod("b", "vk-cn001", "500m"), testPod("c", "cn002", "1"), testPod("d", "gpu01", "1")
	var created []podapi.Created
	for _, p := range []corev1.Pod{a, b, c, a} { // a twice: created once, by its UID
		created = append(created, create(t, server, p))
	}
	wantCreated := []podapi.Created{{PodUID: "a", PodJID: "job-1"}, {PodUID: "b", PodJID: "job-2"}, {PodUID: "c", PodJID: "job-3"}, {PodUID: "a", PodJID: "job-1"}}
	if diff := cmp.Diff(wantCreated, created); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	if words := refusedCreate(t, server, d); !strings.HasSuffix(words, partsfleet.RefusedNoMachine) {
		t.Errorf("the create of d, on no machine, answered %q; want the backend's reason, %q", words, partsfleet.RefusedNoMachine)
	}
	if fleet.Created() != 4 {
		t.Errorf("%d jobs created for 4 pods; want one a pod", fleet.Created())
	}

	queued := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "Queued"}}
	runningSince := func(at time.Time) corev1.ContainerState {
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}}
	}
	steps := []struct {
		name   string
		minute int64        // the clock, in minutes after t0
		delete []corev1.Pod // deleted first, each answered 200
		ask    []corev1.Pod
		want   []podapi.PodStatus
		free   []string // the ping's free cpus after
	}{
		{"created", 0, nil, []corev1.Pod{a, b, c, d, testPod("unknown", "cn001", "1")}, []podapi.PodStatus{
			podStatus(a, "job-1", runningSince(t0)), podStatus(b, "job-2", queued),
			podStatus(c, "job-3", queued),
		}, []string{"full", "full"}},
		{"room freed", 5, []corev1.Pod{a}, []corev1.Pod{a, b, c}, []podapi.PodStatus{
			podStatus(b, "job-2", runningSince(t0.Add(5*time.Minute))), podStatus(c, "job-3", queued),
		}, []string{"1", "full"}},
		{"all deleted, b twice", 9, []corev1.Pod{b, b, c, d}, []corev1.Pod{a, b, c, d}, []podapi.PodStatus{}, []string{"2", "full"}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			minutes.Store(step.minute)
			for _, p := range step.delete {
				if code, body := call(t, server, http.MethodPost, podapi.DeletePath, p); code != http.StatusOK {
					t.Fatalf("delete %s: %d: %s", p.UID, code, body)
				}
			}
			if diff := cmp.Diff(step.want, statusOf(t, server, step.ask...), sameInstant); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			for _, empty := range []any{nil, "[]", " null "} {
				if diff := cmp.Diff(step.free, free(ping(empty))); diff != "" {
					t.Errorf("free cpus in the ping with %q (-want +got):\n%s", empty, diff)
				}
			}
		})
	}
}

// TestPodsOneNode: without a fleet, every pod starts at once, whatever
// its node and cpus, and the ping is the one node's reply, the same with
// no body and with an empty list.
func TestPodsOneNode(t *testing.T) {
	jobs := partsfleet.New(partsfleet.Config{Unbounded: true, Now: func() time.Time { return t0 }})
	server := httptest.NewServer(Handler(func() Backend { return Backend{CPU: "8", Memory: "16Gi", Pods: "110"} }, jobs, Options{}))
	defer server.Close()
	a, b := testPod("a", "", "64"), testPod("b", "anywhere", "1")
	create(t, server, a)
	create(t, server, b)
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
	want := []podapi.PodStatus{podStatus(b, "job-2", running), podStatus(a, "job-1", running)}
	if diff := cmp.Diff(want, statusOf(t, server, b, a), sameInstant); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	_, none := call(t, server, http.MethodGet, podapi.StatusPath, nil)
	_, empty := call(t, server, http.MethodGet, podapi.StatusPath, "[]")
	_, reply := get(t, Backend{CPU: "8", Memory: "16Gi", Pods: "110"})
	if string(none) != string(reply) || string(empty) != string(reply) {
		t.Errorf("the ping with no body:\n%s\nwith []:\n%s\nwant the one node's reply:\n%s", none, empty, reply)
	}
}

// TestPodsBadBody: a body that is not what the path takes is answered
// 400 (413 when too large), with what was wanted, and a create 504 in
// plain text, as the Slurm plugin answers; none changes anything.
func TestPodsBadBody(t *testing.T) {
	jobs := partsfleet.New(partsfleet.Config{Unbounded: true})
	handler := Handler(func() Backend { return Backend{CPU: "8", Memory: "16Gi", Pods: "110"} }, jobs, Options{})
	noUID := testPod("", "cn001", "1")
	mounts := testPod("m", "cn001", "1") // the ServiceAccount token's volume, as the API server mounts it
	mounts.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "kube-api-access-x", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	mounts.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}}
	tests := []struct {
		name, method, path string
		body               any
		code               int
		want               string // in the answer
	}{
		{"create, not JSON", http.MethodPost, podapi.CreatePath, "{", http.StatusGatewayTimeout, "want one JSON object, a pod to create (podapi.CreateRequest): "},
		{"create, a list", http.MethodPost, podapi.CreatePath, []podapi.CreateRequest{{Pod: testPod("a", "", "1")}}, http.StatusGatewayTimeout, "cannot unmarshal array"},
		{"create, an empty list", http.MethodPost, podapi.CreatePath, "[]", http.StatusGatewayTimeout, "cannot unmarshal array"},
		{"create, no body", http.MethodPost, podapi.CreatePath, nil, http.StatusGatewayTimeout, "unexpected end of JSON input"},
		{"create, null", http.MethodPost, podapi.CreatePath, "null", http.StatusGatewayTimeout, "with its pod.metadata.uid: got none"},
		{"create, no UID", http.MethodPost, podapi.CreatePath, podapi.CreateRequest{Pod: noUID}, http.StatusGatewayTimeout, "with its pod.metadata.uid: got none"},
		{"create, a mount and no retrieved container", http.MethodPost, podapi.CreatePath, podapi.CreateRequest{Pod: mounts}, http.StatusGatewayTimeout, "could not find retrieved container for " + mounts.Spec.Containers[0].Name + " in pod " + mounts.Name},
		{"create, too large", http.MethodPost, podapi.CreatePath, "{" + strings.Repeat(" ", maxRequestBytes) + "}", http.StatusRequestEntityTooLarge, "body over 33554432 bytes"},
		{"status, not JSON", http.MethodGet, podapi.StatusPath, "pods", http.StatusBadRequest, "want no body, or a JSON list of pods: "},
		{"status, an object", http.MethodGet, podapi.StatusPath, "{}", http.StatusBadRequest, "want no body, or a JSON list of pods: "},
		{"status, too large", http.MethodGet, podapi.StatusPath, "[" + strings.Repeat(" ", maxRequestBytes) + "]", http.StatusRequestEntityTooLarge, "body over 33554432 bytes"},
		{"delete, a list", http.MethodPost, podapi.DeletePath, "[]", http.StatusBadRequest, "want a JSON pod: "},
		{"delete, no body", http.MethodPost, podapi.DeletePath, nil, http.StatusBadRequest, "want a JSON pod with its metadata.uid"},
		{"delete, no UID", http.MethodPost, podapi.DeletePath, noUID, http.StatusBadRequest, "want a JSON pod with its metadata.uid"},
		{"create, a GET", http.MethodGet, podapi.CreatePath, nil, http.StatusMethodNotAllowed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, bodyOf(t, tt.body)))
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("%d: %s; want %d with %q", w.Code, w.Body, tt.code, tt.want)
			}
			if tt.code == http.StatusGatewayTimeout && !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
				t.Errorf("Content-Type %q, want plain text", w.Header().Get("Content-Type"))
			}
		})
	}
	if n := jobs.Created(); n != 0 {
		t.Errorf("%d jobs created by refused requests", n)
	}
}
