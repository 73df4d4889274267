package partsfleet

import (
	"math"
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
// rounded up to whole cpus, and how long it runs, its exit code and the
// lines it writes, if its first container ends by itself. A sum over
// [MaxCPUs] is MaxCPUs+1, more than any machine has.
//
// The first container sleeps N seconds, N a whole number, when its
// command followed by its args is sleep N (["sleep", "60"], or the
// command ["sleep"] with the args ["60"]; sleep may be a path, such as
// /bin/sleep): it ends then, exit code 0. It is a script when it is a
// shell's -c with a single string (["/bin/sh", "-c", "sleep 60"], its
// last word in the args or not): steps separated by ";" or "&&", with as
// much whitespace around the words as may be, each one of
//
//   - sleep N, N a whole number of seconds;
//   - echo and words, on one line, each of ASCII letters, digits and
//     _@%+=:,./- only (the characters a shell takes as they are) and the
//     first not beginning with '-' (an option of echo): it writes a line,
//     the words joined by one space, or an empty line without words
//     ([Echo]);
//   - exit N, N a whole number from 0 to 255, the last step only.
//
// Such a script ends with the exit code N, or 0 without an exit, when it
// has slept all its sleeps, one after the other (at once without a
// sleep), and writes each line when it has slept the sleeps before it:
// sh -c "echo hello; sleep 2; echo bye; exit 3" writes hello at once,
// bye 2 seconds after it started, and then ends with the exit code 3, so
// that a test can run a Kubernetes Job whose pods fail with a code and
// a log of their own. A code over 255 (of which a shell keeps the low 8
// bits), with a sign, or none, an exit before another step, an empty
// step, a word with quotes, a variable, a glob or a redirection, and any
// other command are anything else, which runs until deleted.
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
		job.Sleep, job.ExitCode, job.Echoes, job.Sleeps = endOf(pod.Spec.Containers[0])
	}
	return job
}

// endOf returns how long c runs, the exit code it ends with and the
// lines it writes, and reports whether it ends by itself so (see JobOf).
func endOf(c corev1.Container) (time.Duration, int32, []Echo, bool) {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) != 3 || argv[1] != "-c" {
		d, ok := sleepOf(argv)
		return d, 0, nil, ok
	}
	steps := strings.Split(strings.ReplaceAll(argv[2], "&&", ";"), ";")
	var (
		after  time.Duration
		echoes []Echo
	)
	for i, step := range steps {
		words := strings.Fields(step)
		if d, ok := sleepOf(words); ok && d <= math.MaxInt64-after {
			after += d
			continue
		}
		if text, ok := echoOf(step, words); ok {
			echoes = append(echoes, Echo{After: after, Text: text})
			continue
		}
		if code, ok := exitOf(words); ok && i == len(steps)-1 {
			return after, code, echoes, true
		}
		return 0, 0, nil, false
	}
	return after, 0, echoes, true
}

// echoOf returns the line that the shell step, of the words, writes, and
// reports whether it is echo and plain words, on one line (see JobOf).
func echoOf(step string, words []string) (string, bool) {
	if len(words) == 0 || words[0] != "echo" || strings.Contains(strings.TrimSpace(step), "\n") {
		return "", false
	}
	if len(words) > 1 && strings.HasPrefix(words[1], "-") {
		return "", false
	}
	for _, w := range words[1:] {
		if strings.IndexFunc(w, func(r rune) bool { return !plain(r) }) >= 0 {
			return "", false
		}
	}
	return strings.Join(words[1:], " "), true
}

// plain reports whether a shell takes r in a word as it is: an ASCII
// letter or digit, or one of _@%+=:,./-.
func plain(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)
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
