package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/pingstatus"
)

// fixture returns a fixture of the wire, the bytes interLink sends or
// its Slurm plugin answers, from podapi's testdata.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "internal", "podapi", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// plainJSON is data decoded as plain JSON values, for a comparison of
// shapes.
func plainJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return v
}

// TestContract: the fixtures' requests, as interLink sends them, fed to
// the plugin in either mode, are answered as interLink reads them, each
// decoded strictly: the ping with a reply; the create with one
// podapi.Created object, with the keys of create.answer.json and the
// pod's UID; the status with a list of podapi.PodStatus, the pod's,
// running; the delete with 200. One job, and no delete of a pod without
// one.
func TestContract(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"slurm", []string{"-slurm"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server, jobs, _ := serve(t, t0, tt.args...)
			code, body := call(t, server, http.MethodGet, podapi.StatusPath, string(fixture(t, "ping.request.json")))
			var reply pingstatus.PingResponse
			if err := strictly(body, &reply); code != http.StatusOK || err != nil || reply.Resources == nil {
				t.Errorf("ping: %d, %v: %s", code, err, body)
			}

			code, body = call(t, server, http.MethodPost, podapi.CreatePath, string(fixture(t, "create.request.json")))
			var created podapi.Created
			if err := strictly(body, &created); code != http.StatusOK || err != nil || bytes.TrimSpace(body)[0] != '{' {
				t.Fatalf("create: %d, %v: %s; want one podapi.Created object", code, err, body)
			}
			answer := plainJSON(t, fixture(t, "create.answer.json")).(map[string]any)
			got := plainJSON(t, body).(map[string]any)
			if keys, want := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(answer)); !slices.Equal(keys, want) || got["PodUID"] != answer["PodUID"] || created.PodJID == "" {
				t.Errorf("create answered %s; want the keys %v of create.answer.json, its PodUID and a job", body, want)
			}

			code, body = call(t, server, http.MethodGet, podapi.StatusPath, string(fixture(t, "status.request.json")))
			var statuses []podapi.PodStatus
			if err := strictly(body, &statuses); code != http.StatusOK || err != nil {
				t.Fatalf("status: %d, %v: %s", code, err, body)
			}
			if len(statuses) != 1 || statuses[0].UID != created.PodUID || len(statuses[0].Containers) != 1 || statuses[0].Containers[0].State.Running == nil {
				t.Errorf("status: %s; want the pod's, its container main running", body)
			}

			if code, body = call(t, server, http.MethodPost, podapi.DeletePath, string(fixture(t, "delete.request.json"))); code != http.StatusOK {
				t.Errorf("delete: %d: %s", code, body)
			}
			if jobs.Created() != 1 || jobs.UnknownDeletes() != 0 {
				t.Errorf("%d jobs, %d deletes of a pod without one; want 1 and 0", jobs.Created(), jobs.UnknownDeletes())
			}
		})
	}
}

// TestContractSlurmStatusAnswer: with -slurm, a status of a queued, a
// running, a completed, a cancelled and an unknown pod is the Slurm
// plugin's answer of status.answer.json, key for key: waiting with no
// reason, running since its start, terminated with exit code 0 since its
// start, terminated with exit code 15 and no start, and "state":{}; JID
// empty. Its times are those of the status refreshes that saw each: at
// 0 s every job started or queued, at 60 s the completed one ended, at
// 120 s the cancelled one ended.
func TestContractSlurmStatusAnswer(t *testing.T) {
	start := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	server, jobs, clock := serve(t, start, append([]string{"-slurm"}, twoIdleOf1...)...)
	pod := func(name, uid, flags string, command ...string) corev1.Pod {
		p := slurmPod(uid, flags, "1", command...)
		p.Name = name
		return p
	}
	completed := pod("completed", "uid-cd", "", "sleep", "60") // on cn001
	running := pod("running", "uid-r", "")                     // on cn002
	queued := pod("queued", "uid-pd", "-w cn002")
	cancelled := pod("cancelled", "uid-ca", "--nodelist=cn002")
	for _, p := range []corev1.Pod{completed, running, queued} {
		create(t, server, p)
	}
	jid := create(t, server, cancelled).PodJID
	for _, at := range []time.Duration{0, time.Minute} { // refreshes, 10s or more apart
		clock.set(at)
		statusOf(t, server, queued, running, completed, cancelled)
	}
	clock.set(2 * time.Minute)
	if !jobs.Cancel(jid) {
		t.Fatalf("job %s of the pod cancelled was not queued", jid)
	}
	code, body := call(t, server, http.MethodGet, podapi.StatusPath, []corev1.Pod{queued, running, completed, cancelled, pod("unknown", "uid-gone", "")})
	var statuses []podapi.PodStatus
	if err := strictly(body, &statuses); code != http.StatusOK || err != nil {
		t.Fatalf("status: %d, %v: %s", code, err, body)
	}
	if diff := cmp.Diff(plainJSON(t, fixture(t, "status.answer.json")), plainJSON(t, body)); diff != "" {
		t.Errorf("status (-status.answer.json +answered):\n%s", diff)
	}
}
