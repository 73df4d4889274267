package main

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
