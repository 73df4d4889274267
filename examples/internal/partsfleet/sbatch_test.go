package partsfleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// limited is a container limited to cpu and memory (none when empty).
func limited(name, cpu, memory string) corev1.Container {
	c := corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return c
}

// scriptPod is a pod of containers and init containers, with the sbatch
// flags flags (none when empty).
func scriptPod(flags string, init []corev1.Container, containers ...corev1.Container) *corev1.Pod {
	p := &corev1.Pod{}
	p.UID, p.Namespace, p.Name = "u1", "ns", "p"
	p.Spec.Containers, p.Spec.InitContainers = containers, init
	if flags != "" {
		p.Annotations = map[string]string{podapi.SlurmFlags: flags}
	}
	return p
}

// TestSlurmScriptSize: a job's cpus are the largest cpu limit of its
// containers, init containers among them, rounded up, and its memory the
// largest memory limit, in whole MiB rounded down; requests count for
// nothing; without a limit, the sbatch flags' --cpus-per-task (-c) and
// --mem, or 1 cpu and 1 MiB; with one, those flags are dropped (the
// Slurm plugin's sizing).
func TestSlurmScriptSize(t *testing.T) {
	requested := corev1.Container{Name: "main", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("6"), corev1.ResourceMemory: resource.MustParse("6Gi"),
	}}}
	tests := []struct {
		name       string
		flags      string
		init       []corev1.Container
		containers []corev1.Container
		cpus       int
		memoryMi   int64
	}{
		{"no limits", "", nil, []corev1.Container{{Name: "main"}}, 1, 1},
		{"no containers", "", nil, nil, 1, 1},
		{"requests only", "", nil, []corev1.Container{requested}, 1, 1},
		{"the largest limit", "", nil, []corev1.Container{limited("a", "2", "1Gi"), limited("b", "3", "512Mi")}, 3, 1024},
		{"rounded up", "", nil, []corev1.Container{limited("a", "1500m", "")}, 2, 1},
		{"a millicpu", "", nil, []corev1.Container{limited("a", "1m", "")}, 1, 1},
		{"memory in whole MiB, rounded down", "", nil, []corev1.Container{limited("a", "", "1G")}, 1, 953},
		{"memory under 1 MiB is --mem=0", "", nil, []corev1.Container{limited("a", "", "100Ki")}, 1, 0},
		{"an init container's limit", "", []corev1.Container{limited("i", "8", "8Gi")}, []corev1.Container{limited("a", "1", "1Gi")}, 8, 8192},
		{"one container limited", "", nil, []corev1.Container{{Name: "a"}, limited("b", "4", "")}, 4, 1},
		{"the flags without limits", "--cpus-per-task=6 --mem=2G", nil, []corev1.Container{{Name: "main"}}, 6, 2048},
		{"the short flag", "-c 3 --mem 100", nil, []corev1.Container{{Name: "main"}}, 3, 100},
		{"the last one given", "-c 3 --cpus-per-task=5", nil, []corev1.Container{{Name: "main"}}, 5, 1},
		{"--mem in K, rounded up", "--mem=1500K", nil, []corev1.Container{{Name: "main"}}, 1, 2},
		{"--mem in T", "--mem=1tb", nil, []corev1.Container{{Name: "main"}}, 1, 1 << 20},
		{"the flags dropped beside limits", "--cpus-per-task=6 --mem=2G", nil, []corev1.Container{limited("a", "2", "1Gi")}, 2, 1024},
		{"more than any machine", "", nil, []corev1.Container{limited("a", "1e30", "")}, MaxCPUs + 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SlurmScriptOf(scriptPod(tt.flags, tt.init, tt.containers...))
			if !s.Submitted || s.Stderr != "" || s.Job.CPUs != tt.cpus || s.Job.MemoryMi != tt.memoryMi {
				t.Errorf("SlurmScriptOf: %d cpus, %d MiB, submitted %v, stderr %q; want %d cpus, %d MiB, submitted silently",
					s.Job.CPUs, s.Job.MemoryMi, s.Submitted, s.Stderr, tt.cpus, tt.memoryMi)
			}
		})
	}
	s := SlurmScriptOf(scriptPod("-w cn002", nil, corev1.Container{Name: "main", Command: []string{"sleep", "5"}}))
	want := Job{UID: "u1", Namespace: "ns", Name: "p", Flags: "-w cn002", CPUs: 1, MemoryMi: 1, Containers: []string{"main"}, Sleeps: true, Sleep: 5 * time.Second}
	if diff := cmp.Diff(want, s.Job); diff != "" {
		t.Errorf("SlurmScriptOf's job (-want +got):\n%s", diff)
	}
}

// TestSlurmScriptTime: --time (-t) is read as sbatch reads it: minutes,
// minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes
// or days-hours:minutes:seconds, rounded up to whole minutes; 0, -1,
// INFINITE or UNLIMITED is no limit; anything else stops sbatch, which
// submits nothing (a time limit).
func TestSlurmScriptTime(t *testing.T) {
	tests := []struct {
		flags string
		limit time.Duration
		ok    bool
	}{
		{"", 0, true},
		{"--time=10", 10 * time.Minute, true},
		{"--time 10", 10 * time.Minute, true},
		{"-t 10", 10 * time.Minute, true},
		{"-t=10", 10 * time.Minute, true},
		{"--time=2:30", 3 * time.Minute, true},
		{"--time=0:30", time.Minute, true},
		{"--time=1:00:00", time.Hour, true},
		{"--time=1:02:03", 63 * time.Minute, true},
		{"--time=1-0", 24 * time.Hour, true},
		{"--time=1-2:30", 26*time.Hour + 30*time.Minute, true},
		{"--time=1-2:30:01", 26*time.Hour + 31*time.Minute, true},
		{"--time=5 --time=7", 7 * time.Minute, true},
		{"--time=0", 0, true},
		{"--time=0:00", 0, true},
		{"--time=-1", 0, true},
		{"--time=UNLIMITED", 0, true},
		{"--time=infinite", 0, true},
		{"--time=1h", 0, false},
		{"--time=", 0, false},
		{"--time", 0, false},
		{"--time=1:2:3:4", 0, false},
		{"--time=5:", 0, false},
		{"--time=:5", 0, false},
		{"--time=1-2-3", 0, false},
		{"--time=-5", 0, false},
		{"--time=99999999999", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.flags, func(t *testing.T) {
			s := SlurmScriptOf(scriptPod(tt.flags, nil, corev1.Container{Name: "main"}))
			if tt.ok {
				if !s.Submitted || s.Stderr != "" || s.Job.TimeLimit != tt.limit {
					t.Errorf("time limit %v, submitted %v, stderr %q; want %v, submitted silently", s.Job.TimeLimit, s.Submitted, s.Stderr, tt.limit)
				}
				return
			}
			if s.Submitted || s.Stderr != "sbatch: error: Invalid --time specification\n" {
				t.Errorf("submitted %v, stderr %q; want nothing submitted, and sbatch's error", s.Submitted, s.Stderr)
			}
		})
	}
}

// TestSlurmScriptStderr: sbatch stops, submitting nothing, at a
// --cpus-per-task or a --mem it cannot read (taken from the flags only
// without limits), or at a cpu count under 1 that negative limits make;
// it warns, and submits the job, when --ntasks is fewer than --nodes.
func TestSlurmScriptStderr(t *testing.T) {
	tests := []struct {
		name       string
		flags      string
		containers []corev1.Container
		stderr     string
		submitted  bool
	}{
		{"a bad --cpus-per-task", "--cpus-per-task=two", []corev1.Container{{Name: "main"}}, "sbatch: error: Invalid numeric value \"two\" for --cpus-per-task.\n", false},
		{"a zero -c", "-c 0", []corev1.Container{{Name: "main"}}, "sbatch: error: Invalid numeric value \"0\" for --cpus-per-task.\n", false},
		{"a huge -c", "-c 2147483647", []corev1.Container{{Name: "main"}}, "sbatch: error: Numeric argument (2147483647) too large for --cpus-per-task.\n", false},
		{"a bad --mem", "--mem=lots", []corev1.Container{{Name: "main"}}, "sbatch: error: Invalid --mem specification\n", false},
		{"a negative --mem", "--mem=-1", []corev1.Container{{Name: "main"}}, "sbatch: error: Invalid --mem specification\n", false},
		{"bad flags dropped beside limits", "--cpus-per-task=two --mem=lots", []corev1.Container{limited("a", "1", "1Gi")}, "", true},
		{"negative limits", "", []corev1.Container{limited("a", "-2", "")}, "sbatch: error: Invalid numeric value \"0\" for --cpus-per-task.\n", false},
		{"fewer tasks than nodes", "--ntasks=1 --nodes=2", []corev1.Container{{Name: "main"}}, "sbatch: warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n", true},
		{"the short flags", "-n 2 -N 3", []corev1.Container{{Name: "main"}}, "sbatch: warning: can't run 2 processes on 3 nodes, setting nnodes to 2\n", true},
		{"as many tasks as nodes", "-n 2 -N 2", []corev1.Container{{Name: "main"}}, "", true},
		{"nodes alone", "--nodes=3", []corev1.Container{{Name: "main"}}, "", true},
		{"an error before a warning", "--ntasks=1 --nodes=2 --time=soon", []corev1.Container{{Name: "main"}}, "sbatch: error: Invalid --time specification\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SlurmScriptOf(scriptPod(tt.flags, nil, tt.containers...))
			if s.Stderr != tt.stderr || s.Submitted != tt.submitted {
				t.Errorf("stderr %q, submitted %v; want %q, %v", s.Stderr, s.Submitted, tt.stderr, tt.submitted)
			}
		})
	}
}
