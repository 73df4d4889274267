package main

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// echoPod is a pod of node whose job runs the shell script, which the
// sample plugin's backend runs as a shell would (echo, sleep, exit).
func echoPod(name, node, script string) *corev1.Pod {
	p := partPod(name, "", nil, "1")
	p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	p.Spec.Containers[0].Command = []string{"/bin/sh", "-c", script}
	return p
}

// podLog is what kubectl logs prints of the pod's container job, with
// opts: the API server asks the pod's node for it, at the address and
// port its status publishes.
func podLog(ctx context.Context, t *testing.T, name string, opts corev1.PodLogOptions) (string, error) {
	t.Helper()
	if opts.Container == "" {
		opts.Container = "job"
	}
	out, err := client.CoreV1().Pods(metav1.NamespaceDefault).GetLogs(name, &opts).DoRaw(ctx)
	return string(out), err
}

// TestKubectlLogs: with -kubelet-addr (and every other setting at its
// default, against the sample plugin as shipped), the node publishes its
// kubelet API (its InternalIP and port), served over TLS with a
// certificate made at start, and kubectl logs of its pods prints what
// their jobs wrote, through the plugin's /getLogs: of a running pod, all
// of it, with --tail, with --since (a day: all) and --since-time (an
// hour from now: nothing); of a finished one too; and with -f, each line
// as the job writes it, until the job ends.
func TestKubectlLogs(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t)
	const node = "vk-logs"
	startProviderProcess(t, "-plugin", url, "-node", node, "-kubelet-addr", "127.0.0.1:0")
	t.Cleanup(func() { deleteNode(t, node) })
	within(t, time.Minute, "the node publishes its kubelet API", func(ctx context.Context) (bool, string) {
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
		return port > 0 && len(n.Status.Addresses) == 1 && n.Status.Addresses[0].Address == "127.0.0.1", fmt.Sprintf("addresses %v, port %d", n.Status.Addresses, port)
	})

	const runs, ends, follows = "logs-runs", "logs-ends", "logs-follows"
	createTestPod(t, echoPod(runs, node, "echo first; echo second; sleep 600"))
	createTestPod(t, echoPod(ends, node, "echo one; echo two; exit 3"))
	within(t, 2*time.Minute, "one pod runs, the other failed", func(context.Context) (bool, string) {
		r, e := storedPod(t, runs).Status.Phase, storedPod(t, ends).Status.Phase
		return r == corev1.PodRunning && e == corev1.PodFailed, string(r) + ", " + string(e)
	})
	one, day := int64(1), int64(86400)
	later := metav1.NewTime(time.Now().Add(time.Hour))
	for _, tt := range []struct {
		pod  string
		opts corev1.PodLogOptions
		want string
	}{
		{runs, corev1.PodLogOptions{}, "first\nsecond\n"},
		{runs, corev1.PodLogOptions{TailLines: &one}, "second\n"},
		{runs, corev1.PodLogOptions{SinceSeconds: &day}, "first\nsecond\n"},
		{runs, corev1.PodLogOptions{SinceTime: &later}, ""},
		{ends, corev1.PodLogOptions{}, "one\ntwo\n"},
		{ends, corev1.PodLogOptions{TailLines: &one}, "two\n"},
	} {
		got, err := podLog(t.Context(), t, tt.pod, tt.opts)
		if err != nil || got != tt.want {
			t.Errorf("kubectl logs %s (tail %v, since %v, since-time %v): %q, %v; want %q", tt.pod, tt.opts.TailLines, tt.opts.SinceSeconds, tt.opts.SinceTime, got, err, tt.want)
		}
	}

	createTestPod(t, echoPod(follows, node, "echo early; sleep 3; echo late"))
	within(t, 2*time.Minute, follows+" runs", func(context.Context) (bool, string) {
		phase := storedPod(t, follows).Status.Phase
		return phase == corev1.PodRunning || phase == corev1.PodSucceeded, string(phase)
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	stream, err := client.CoreV1().Pods(metav1.NamespaceDefault).GetLogs(follows, &corev1.PodLogOptions{Container: "job", Follow: true}).Stream(ctx)
	if err != nil {
		t.Fatalf("kubectl logs -f %s: %v", follows, err)
	}
	all, err := io.ReadAll(stream) // ends when the job has ended
	_ = stream.Close()
	if err != nil || string(all) != "early\nlate\n" {
		t.Errorf("kubectl logs -f %s: %q, %v; want early and late, then its end", follows, all, err)
	}

}

// TestKubectlLogsThroughInterLink: kubectl logs as interLink is deployed,
// the provider's /getLogs through interLink's API (its double) to the
// sample plugin as interLink's Slurm plugin (-slurm), which reads the
// job's output file: a failed pod's whole log, and with --tail 1 the
// last line and the empty one after its newline, as the Slurm plugin
// splits a log on "\n" and keeps one line more than asked
// (pkg/slurm/GetLogs.go at f8451d9).
func TestKubectlLogsThroughInterLink(t *testing.T) {
	needsControlPlane(t)
	_, api := interLinkStack(t)
	const node, pod = "vk-logs-interlink", "logs-interlink"
	startProviderProcess(t, "-plugin", api+"/pinglink", "-node", node, "-kubelet-addr", "127.0.0.1:0")
	t.Cleanup(func() { deleteNode(t, node) })
	createTestPod(t, echoPod(pod, node, "echo one; echo two; exit 3"))
	within(t, 2*time.Minute, pod+" failed", func(context.Context) (bool, string) {
		phase := storedPod(t, pod).Status.Phase
		return phase == corev1.PodFailed, string(phase)
	})
	one := int64(1)
	for _, tt := range []struct {
		tail *int64
		want string
	}{{nil, "one\ntwo\n"}, {&one, "two\n\n"}} {
		got, err := podLog(t.Context(), t, pod, corev1.PodLogOptions{TailLines: tt.tail})
		if err != nil || got != tt.want {
			t.Errorf("kubectl logs %s (tail %v) through interLink's API: %q, %v; want %q", pod, tt.tail, got, err, tt.want)
		}
	}
}
