package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// statusAnswer asks the server for the status of pods, in the session
// session (the header InterLink-Http-Session; none when empty), and
// returns the answer's status code and body.
func statusAnswer(t *testing.T, server *httptest.Server, session string, pods ...corev1.Pod) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, server.URL+podapi.StatusPath, bodyOf(t, pods))
	if err != nil {
		t.Fatal(err)
	}
	if session != "" {
		req.Header.Set("InterLink-Http-Session", session)
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
	return resp.StatusCode, string(data)
}

// terminatedAt is a terminated state with exit code, started and
// finished (zero: null).
func terminatedAt(code int32, started, finished time.Time) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(finished),
	}}
}

// runningSince is a running state since started.
func runningSince(started time.Time) corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}
}

// TestSlurmStartSeenAtRefresh: with -slurm a job's start is what a
// status refresh (one every -status-cache, 10 s) first saw running, and
// its end what one first saw ended: a 2 s job that ran between two
// refreshes is terminated, exit code 0, with no start; a job that runs
// is running since the refresh that saw it, not since it started; one
// seen running then ended is terminated from that refresh to the one
// that saw it ended (the Slurm plugin's JidStruct StartTime and EndTime).
func TestSlurmStartSeenAtRefresh(t *testing.T) {
	server, _, clock := serve(t, t0, "-slurm")
	quick := slurmPod("quick", "", "1", "sleep", "2")
	slow := slurmPod("slow", "", "1", "sleep", "15")
	long := slurmPod("long", "", "1")
	if got := statusOf(t, server, long); len(got) != 1 || got[0].Containers[0].State != (corev1.ContainerState{}) {
		t.Fatalf("the refresh at 0s, before any job: %+v", got)
	}
	clock.set(time.Second)
	for _, p := range []corev1.Pod{quick, slow, long} {
		create(t, server, p)
	}
	clock.set(5 * time.Second)
	if got := statusOf(t, server, quick, slow, long); len(got) != 1 || got[0].UID != "long" {
		t.Fatalf("at 5s: %+v; want the answer of the refresh at 0s, verbatim", got)
	}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	clock.set(10 * time.Second)
	want := []podapi.PodStatus{
		slurmStatus(quick, terminatedAt(0, time.Time{}, at(10*time.Second))),
		slurmStatus(slow, runningSince(at(10*time.Second))),
		slurmStatus(long, runningSince(at(10*time.Second))),
	}
	if diff := cmp.Diff(want, statusOf(t, server, quick, slow, long), sameInstant); diff != "" {
		t.Errorf("the refresh at 10s (-want +got):\n%s", diff)
	}
	clock.set(20 * time.Second)
	want[1] = slurmStatus(slow, terminatedAt(0, at(10*time.Second), at(20*time.Second)))
	if diff := cmp.Diff(want, statusOf(t, server, quick, slow, long), sameInstant); diff != "" {
		t.Errorf("the refresh at 20s (-want +got):\n%s", diff)
	}
}

// TestSlurmForgottenJob: once Slurm forgot a job (-slurm-min-job-age
// after it ended, 300 s by default), a status that names its pod is
// answered 500, whatever other pods it names, with the Slurm plugin's
// words, when the job never wrote its status file: cancelled from
// outside (CA) or timed out (TO, at its --time); one that completed on
// its own (CD) is answered from its status file, terminated with its
// exit code and no times. Before, each is terminated as squeue says, a
// timed-out one with the plugin's reason and message. A failed answer is
// not cached; a cached one is served whatever it names. With
// -slurm-min-job-age 0 Slurm forgets nothing.
func TestSlurmForgottenJob(t *testing.T) {
	done := slurmPod("done", "", "1", "sleep", "60")
	timed := slurmPod("timed", "--time=1", "1", "sleep", "600")
	cancelled := slurmPod("cancelled", "", "1")
	runs := slurmPod("runs", "", "1")
	start := func(t *testing.T, args ...string) (*httptest.Server, *partsfleet.Fleet, *testClock) {
		server, fleet, clock := serve(t, t0, append([]string{"-slurm"}, args...)...)
		for _, p := range []corev1.Pod{done, timed, runs} {
			create(t, server, p)
		}
		jid := create(t, server, cancelled).PodJID
		statusOf(t, server, done, timed, cancelled, runs) // each seen running at 0s
		clock.set(30 * time.Second)
		if !fleet.Cancel(jid) {
			t.Fatal("cancelled's job was not running")
		}
		return server, fleet, clock
	}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	forgotten := func(session, uid string) string {
		return "HTTP InterLink session " + session + ": unable to retrieve container status: open .local/interlink/jobs/team-a-" + uid + "/run-main.status: no such file or directory"
	}

	t.Run("forgotten", func(t *testing.T) {
		server, fleet, clock := start(t, "-status-cache", "0")
		clock.set(100 * time.Second)
		timedOut := terminatedAt(15, t0, at(100*time.Second))
		timedOut.Terminated.Reason, timedOut.Terminated.Message = "SlurmJobTimeout", "SLURM job reached its time limit and was terminated"
		want := []podapi.PodStatus{
			slurmStatus(done, terminatedAt(0, t0, at(100*time.Second))),
			slurmStatus(timed, timedOut),
			slurmStatus(cancelled, terminatedAt(15, t0, at(100*time.Second))),
			slurmStatus(runs, runningSince(t0)),
		}
		if diff := cmp.Diff(want, statusOf(t, server, done, timed, cancelled, runs), sameInstant); diff != "" {
			t.Errorf("at 100s (-want +got):\n%s", diff)
		}
		if s := fleet.JobsOf("timed"); len(s) != 1 || s[0].State != partsfleet.TimedOut || !s[0].Finished.Equal(at(time.Minute)) {
			t.Errorf("timed's jobs: %+v; want one, timed out at 60s", s)
		}
		clock.set(330*time.Second - time.Nanosecond)
		if code, body := statusAnswer(t, server, "", runs, cancelled); code != http.StatusOK {
			t.Errorf("just before 300s after the cancel: %d %s", code, body)
		}
		clock.set(330 * time.Second)
		if code, body := statusAnswer(t, server, "", runs, cancelled); code != http.StatusInternalServerError || body != forgotten("NoSessionFound#0", "cancelled") {
			t.Errorf("300s after the cancel: %d %q; want 500 %q", code, body, forgotten("NoSessionFound#0", "cancelled"))
		}
		if code, body := statusAnswer(t, server, "", runs, done, timed); code != http.StatusOK {
			t.Errorf("the others, not yet forgotten: %d %s", code, body)
		}
		clock.set(360 * time.Second)
		want = []podapi.PodStatus{slurmStatus(runs, runningSince(t0)), slurmStatus(done, terminatedAt(0, time.Time{}, time.Time{}))}
		if diff := cmp.Diff(want, statusOf(t, server, runs, done), sameInstant); diff != "" {
			t.Errorf("done forgotten, from its status file (-want +got):\n%s", diff)
		}
		if code, body := statusAnswer(t, server, "vk-1#7", timed, runs); code != http.StatusInternalServerError || body != forgotten("vk-1#7", "timed") {
			t.Errorf("timed forgotten: %d %q; want 500 %q", code, body, forgotten("vk-1#7", "timed"))
		}
	})

	t.Run("cached", func(t *testing.T) {
		server, _, clock := start(t)
		clock.set(325 * time.Second)
		first := statusOf(t, server, runs)
		clock.set(330 * time.Second)
		if got := statusOf(t, server, cancelled); cmp.Diff(first, got) != "" {
			t.Errorf("within the cache: %+v; want the cached answer, verbatim", got)
		}
		clock.set(335 * time.Second)
		if code, _ := statusAnswer(t, server, "", cancelled); code != http.StatusInternalServerError {
			t.Errorf("past the cache: %d, want 500", code)
		}
		clock.set(336 * time.Second)
		if code, body := statusAnswer(t, server, "", runs); code != http.StatusOK || !json.Valid([]byte(body)) {
			t.Errorf("a second after the 500: %d %s; want a fresh answer, the 500 not cached", code, body)
		}
	})

	t.Run("never forgotten", func(t *testing.T) {
		server, _, clock := start(t, "-status-cache", "0", "-slurm-min-job-age", "0")
		clock.set(time.Hour)
		if code, body := statusAnswer(t, server, "", cancelled, timed, done); code != http.StatusOK {
			t.Errorf("an hour on, with -slurm-min-job-age 0: %d %s", code, body)
		}
	})
}
