package partsfleet

import (
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// JobOf is the job of pod: its UID, namespace, name, node name and
// sbatch flags, its containers' names, its cpus, the sum of its
// containers' cpu requests (a limit for a container that has none),
// rounded up to whole cpus, and how long it runs and its exit code, if
// its first container ends by itself. A sum over [MaxCPUs] is
// MaxCPUs+1, more than any machine has.
//
// The first container sleeps N seconds, N a whole number, when its
// command followed by its args is sleep N (["sleep", "60"], or the
// command ["sleep"] with the args ["60"]; sleep may be a path, such as
// /bin/sleep), or a shell's -c with the single string "sleep N"
// (["/bin/sh", "-c", "sleep 60"], its last word in the args or not): it
// ends then, exit code 0. It ends with the exit code N, N a whole number
// from 0 to 255, when it is a shell's -c with the string "exit N", at
// once, or "sleep S; exit N" or "sleep S && exit N", S seconds after it
// started, the words and the separator with as much whitespace around
// them as may be: a script that a test writes so that its pod fails with
// a code of its own. A code over 255 (of which a shell keeps the low 8
// bits), with a sign, or none, and a script that does more, or exits
// before it sleeps, are anything else, which runs until deleted.
func JobOf(pod *corev1.Pod) Job {
	job := Job{
		UID:        string(pod.UID),
		Namespace:  pod.Namespace,
		Name:       pod.Name,
		Node:       pod.Spec.NodeName,
		Flags:      pod.Annotations[podapi.SlurmFlags],
		Containers: make([]string, len(pod.Spec.Containers)),
	}
	var sum resource.Quantity
	for i, c := range pod.Spec.Containers {
		job.Containers[i] = c.Name
		q, ok := c.Resources.Requests[corev1.ResourceCPU]
		if !ok {
			q, ok = c.Resources.Limits[corev1.ResourceCPU]
		}
		if ok && q.Sign() > 0 {
			sum.Add(q)
		}
	}
	if sum.Cmp(*resource.NewQuantity(MaxCPUs, resource.DecimalSI)) > 0 {
		job.CPUs = MaxCPUs + 1
	} else {
		job.CPUs = int(sum.Value()) // Value rounds up
	}
	if len(pod.Spec.Containers) > 0 {
		job.Sleep, job.ExitCode, job.Sleeps = endOf(pod.Spec.Containers[0])
	}
	return job
}

// endOf returns how long c runs and the exit code it ends with, and
// reports whether it ends by itself so (see JobOf).
func endOf(c corev1.Container) (time.Duration, int32, bool) {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) != 3 || argv[1] != "-c" {
		d, ok := sleepOf(argv)
		return d, 0, ok
	}
	script := argv[2]
	first, last, two := strings.Cut(script, ";")
	if !two {
		first, last, two = strings.Cut(script, "&&")
	}
	if !two {
		if code, ok := exitOf(strings.Fields(script)); ok {
			return 0, code, true
		}
		d, ok := sleepOf(strings.Fields(script))
		return d, 0, ok
	}
	d, sleeps := sleepOf(strings.Fields(first))
	code, exits := exitOf(strings.Fields(last))
	if !sleeps || !exits {
		return 0, 0, false
	}
	return d, code, true
}

// sleepOf returns how long the command argv sleeps, and reports whether
// it is sleep N (see JobOf).
func sleepOf(argv []string) (time.Duration, bool) {
	if len(argv) != 2 || argv[0] != "sleep" && !strings.HasSuffix(argv[0], "/sleep") {
		return 0, false
	}
	n, err := strconv.ParseUint(argv[1], 10, 32) // digits only: no sign, unit or fraction
	if err != nil {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// exitOf returns the exit code of the shell command argv, and reports
// whether it is exit N, N from 0 to 255 (see JobOf).
func exitOf(argv []string) (int32, bool) {
	if len(argv) != 2 || argv[0] != "exit" {
		return 0, false
	}
	n, err := strconv.ParseUint(argv[1], 10, 8) // digits only, 255 at most
	if err != nil {
		return 0, false
	}
	return int32(n), true
}
