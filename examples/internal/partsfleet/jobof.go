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
// rounded up to whole cpus, and how long it sleeps, if its first
// container only sleeps. A sum over [MaxCPUs] is MaxCPUs+1, more than
// any machine has.
//
// The first container sleeps N seconds, N a whole number, when its
// command followed by its args is sleep N (["sleep", "60"], or the
// command ["sleep"] with the args ["60"]; sleep may be a path, such as
// /bin/sleep), or a shell's -c with the single string "sleep N"
// (["/bin/sh", "-c", "sleep 60"], its last word in the args or not).
// Anything else, as a shell script that does more, runs until deleted.
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
		job.Sleep, job.Sleeps = sleepOf(pod.Spec.Containers[0])
	}
	return job
}

// sleepOf returns how long c sleeps, and reports whether it only sleeps
// (see JobOf).
func sleepOf(c corev1.Container) (time.Duration, bool) {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) == 3 && argv[1] == "-c" {
		argv = strings.Fields(argv[2])
	}
	if len(argv) != 2 || argv[0] != "sleep" && !strings.HasSuffix(argv[0], "/sleep") {
		return 0, false
	}
	n, err := strconv.ParseUint(argv[1], 10, 32) // digits only: no sign, unit or fraction
	if err != nil {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}
