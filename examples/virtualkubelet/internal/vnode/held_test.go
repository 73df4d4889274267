package vnode

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHeldBy(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	started := func(d time.Duration) *metav1.Time { t := metav1.NewTime(at.Add(d)); return &t }
	requests := func(pairs ...string) corev1.ResourceRequirements {
		list := corev1.ResourceList{}
		for i := 0; i+1 < len(pairs); i += 2 {
			list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
		}
		return corev1.ResourceRequirements{Requests: list}
	}
	always := corev1.ContainerRestartPolicyAlways
	pod := func(phase corev1.PodPhase, start *metav1.Time, spec corev1.PodSpec) *corev1.Pod {
		return &corev1.Pod{Spec: spec, Status: corev1.PodStatus{Phase: phase, StartTime: start}}
	}
	pods := []*corev1.Pod{
		// Two containers: their requests add up.
		pod(corev1.PodRunning, started(-time.Minute), corev1.PodSpec{Containers: []corev1.Container{
			{Resources: requests("cpu", "2", "memory", "4Gi")}, {Resources: requests("cpu", "500m", "nvidia.com/gpu", "1")},
		}}),
		// An init container larger than the containers counts as the
		// scheduler counts it: the larger of the two; a sidecar (an init
		// container that restarts always) adds to the containers; the
		// overhead adds.
		pod(corev1.PodRunning, started(-time.Second), corev1.PodSpec{
			InitContainers: []corev1.Container{
				{Resources: requests("cpu", "1", "memory", "1Gi"), RestartPolicy: &always},
				{Resources: requests("cpu", "8")},
			},
			Containers: []corev1.Container{{Resources: requests("cpu", "2", "memory", "1Gi")}},
			Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
		}),
		// Not counted: started at the ping or after it, not running yet,
		// finished.
		pod(corev1.PodRunning, started(0), corev1.PodSpec{Containers: []corev1.Container{{Resources: requests("cpu", "100")}}}),
		pod(corev1.PodRunning, started(time.Second), corev1.PodSpec{Containers: []corev1.Container{{Resources: requests("cpu", "100")}}}),
		pod(corev1.PodPending, nil, corev1.PodSpec{Containers: []corev1.Container{{Resources: requests("cpu", "100")}}}),
		pod(corev1.PodSucceeded, started(-time.Hour), corev1.PodSpec{Containers: []corev1.Container{{Resources: requests("cpu", "100")}}}),
	}
	// First pod: cpu 2.5, memory 4Gi, gpu 1. Second: the sidecar runs
	// beside the main container (cpu 1 + 2 = 3, memory 2Gi), the plain
	// init container alone needs cpu 8 + the sidecar's 1 = 9, so cpu 9;
	// plus 250m overhead: 9.25.
	want := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("11750m"),
		corev1.ResourceMemory: resource.MustParse("6Gi"),
		"nvidia.com/gpu":      resource.MustParse("1"),
		corev1.ResourcePods:   resource.MustParse("2"),
	}
	got := heldBy(pods, at)
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("heldBy (-want +got):\n%s", diff)
	}
}

// TestHeldByScratchAndHugepages: heldBy counts ephemeral-storage and huge
// pages as the scheduler counts them (NodeResourcesFit): the containers'
// requests add up, an init container counts by its maximum, resource by
// resource, a sidecar (an init container that restarts always) runs
// beside the containers and beside the plain init containers after it.
// The expected figures are worked out by hand in each case's comment.
func TestHeldByScratchAndHugepages(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	always := corev1.ContainerRestartPolicyAlways
	asking := func(pairs ...string) corev1.Container {
		list := corev1.ResourceList{}
		for i := 0; i+1 < len(pairs); i += 2 {
			list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
		}
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: list}}
	}
	sidecar := func(pairs ...string) corev1.Container {
		c := asking(pairs...)
		c.RestartPolicy = &always
		return c
	}
	running := func(init []corev1.Container, containers ...corev1.Container) *corev1.Pod {
		start := metav1.NewTime(at.Add(-time.Minute))
		return &corev1.Pod{
			Spec:   corev1.PodSpec{InitContainers: init, Containers: containers},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &start},
		}
	}
	list := func(pairs ...string) corev1.ResourceList { return asking(pairs...).Resources.Requests }
	const scratch, pages2Mi, pages1Gi = "ephemeral-storage", "hugepages-2Mi", "hugepages-1Gi"

	for _, tt := range []struct {
		name string
		pods []*corev1.Pod
		want corev1.ResourceList
	}{
		{
			name: "the containers' scratch space adds up",
			// 1Gi + 512Mi = 1536Mi.
			pods: []*corev1.Pod{running(nil, asking(scratch, "1Gi"), asking(scratch, "512Mi"))},
			want: list(scratch, "1536Mi", "pods", "1"),
		},
		{
			name: "an init container larger than the containers counts alone, resource by resource",
			// Scratch: the init container's 10Gi against the
			// containers' 2Gi + 1Gi = 3Gi: 10Gi. cpu: its 1 against
			// their 4 + 0: 4.
			pods: []*corev1.Pod{running(
				[]corev1.Container{asking(scratch, "10Gi", "cpu", "1")},
				asking(scratch, "2Gi", "cpu", "4"), asking(scratch, "1Gi"),
			)},
			want: list(scratch, "10Gi", "cpu", "4", "pods", "1"),
		},
		{
			name: "an init container smaller than the containers adds nothing",
			// max(1Gi, 4Gi) = 4Gi.
			pods: []*corev1.Pod{running([]corev1.Container{asking(scratch, "1Gi")}, asking(scratch, "4Gi"))},
			want: list(scratch, "4Gi", "pods", "1"),
		},
		{
			name: "a sidecar adds to the containers",
			// It runs beside them: 1Gi + 2Gi = 3Gi.
			pods: []*corev1.Pod{running([]corev1.Container{sidecar(scratch, "1Gi")}, asking(scratch, "2Gi"))},
			want: list(scratch, "3Gi", "pods", "1"),
		},
		{
			name: "a plain init container after a sidecar runs beside it",
			// The containers with the sidecar: 1Gi + 2Gi = 3Gi; the plain
			// init container with the sidecar started before it:
			// 5Gi + 1Gi = 6Gi; the larger: 6Gi.
			pods: []*corev1.Pod{running(
				[]corev1.Container{sidecar(scratch, "1Gi"), asking(scratch, "5Gi")},
				asking(scratch, "2Gi"),
			)},
			want: list(scratch, "6Gi", "pods", "1"),
		},
		{
			name: "a plain init container before a sidecar runs alone",
			// The containers with the sidecar: 3Gi; the plain init
			// container alone: 5Gi; the larger: 5Gi.
			pods: []*corev1.Pod{running(
				[]corev1.Container{asking(scratch, "5Gi"), sidecar(scratch, "1Gi")},
				asking(scratch, "2Gi"),
			)},
			want: list(scratch, "5Gi", "pods", "1"),
		},
		{
			name: "huge pages add up by size, an init container by its maximum",
			// 2Mi pages: the containers' 1Gi + 512Mi = 1536Mi against
			// the init container's 2Gi: 2Gi. 1Gi pages: the
			// containers' 2Gi against none: 2Gi.
			pods: []*corev1.Pod{running(
				[]corev1.Container{asking(pages2Mi, "2Gi")},
				asking(pages2Mi, "1Gi", pages1Gi, "2Gi"), asking(pages2Mi, "512Mi"),
			)},
			want: list(pages2Mi, "2Gi", pages1Gi, "2Gi", "pods", "1"),
		},
		{
			name: "a sidecar's huge pages add to the containers and to a later init container",
			// The containers with the sidecar: 1Gi + 256Mi = 1280Mi; the
			// plain init container with the sidecar: 2Gi + 256Mi =
			// 2304Mi; the larger: 2304Mi.
			pods: []*corev1.Pod{running(
				[]corev1.Container{sidecar(pages2Mi, "256Mi"), asking(pages2Mi, "2Gi")},
				asking(pages2Mi, "1Gi"),
			)},
			want: list(pages2Mi, "2304Mi", "pods", "1"),
		},
		{
			name: "running pods add up, the others count nothing",
			// Running: 3Gi + 2Gi of scratch, 1Gi of 2Mi pages, 1 cpu.
			// Pending, finished, and started at the ping: nothing.
			pods: func() []*corev1.Pod {
				big := asking(scratch, "100Gi", pages2Mi, "100Gi")
				pending, finished, justNow := running(nil, big), running(nil, big), running(nil, big)
				pending.Status.Phase, pending.Status.StartTime = corev1.PodPending, nil
				finished.Status.Phase = corev1.PodSucceeded
				now := metav1.NewTime(at)
				justNow.Status.StartTime = &now
				return []*corev1.Pod{
					running(nil, asking(scratch, "3Gi", pages2Mi, "1Gi")), pending, finished, justNow,
					running(nil, asking(scratch, "2Gi", "cpu", "1")),
				}
			}(),
			want: list(scratch, "5Gi", pages2Mi, "1Gi", "cpu", "1", "pods", "2"),
		},
		{
			name: "no pod asks for scratch space or huge pages: none held, not zero",
			// Held naming ephemeral-storage would be no harm with a
			// zero, but the list says what the pods ask for, no more.
			pods: []*corev1.Pod{running(nil, asking("cpu", "2"))},
			want: list("cpu", "2", "pods", "1"),
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := heldBy(tt.pods, at)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("heldBy (-want +got):\n%s", diff)
			}
		})
	}
}
