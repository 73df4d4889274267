package jobs

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkStep is one step of a keeper with 500 pods that wait for the
// backend's confirmation, their jobs queued, beside 5,000 pods bound to
// its node that ended (Succeeded), each with its job recorded removed:
// the time of a step, and the plugin's requests a step (the terminal
// pods are asked about no more, and the waiting ones in one request).
//
//	go test -run '^$' -bench BenchmarkStep -benchmem ./internal/jobs
func BenchmarkStep(b *testing.B) {
	s := newSetup(1)
	s.keeper.cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	s.plugin.slurm, s.plugin.state = true, "queued"
	for i := range 500 {
		s.wait(fmt.Sprintf("w%d", i))
	}
	var ended []*corev1.Pod
	record := `{"node":"vk-0","made":"2026-12-03T08:00:00Z","removed":true}`
	for i := range 5000 {
		ended = append(ended, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: fmt.Sprintf("done%d", i), UID: types.UID(fmt.Sprintf("uid-done%d", i)),
				Annotations: map[string]string{RecordAnnotation: record}},
			Spec:   corev1.PodSpec{NodeName: "vk-0", Containers: []corev1.Container{{Name: "job"}}},
			Status: corev1.PodStatus{Phase: corev1.PodSucceeded},
		})
	}
	s.bound = map[string][]*corev1.Pod{"vk-0": ended}
	s.keeper.Step(b.Context()) // the jobs made
	s.now = s.now.Add(time.Minute)
	s.plugin.took()
	b.ResetTimer()
	for b.Loop() {
		s.keeper.Step(b.Context())
	}
	b.StopTimer()
	statuses, pods := 0, 0
	for _, c := range s.plugin.took() {
		if n, ok := strings.CutPrefix(c, "status of "); ok {
			statuses++
			var k int
			_, _ = fmt.Sscan(n, &k)
			pods += k
		} else {
			b.Fatalf("a step called %q, want status questions alone", c)
		}
	}
	b.ReportMetric(float64(statuses)/float64(b.N), "requests/step")
	b.ReportMetric(float64(pods)/float64(b.N), "pods-asked/step")
}
