package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// Scratch space (ephemeral-storage) on the real control plane: the real
// scheduler counts it like cpu (local storage capacity isolation, GA since
// Kubernetes 1.25), and a node that does not advertise it takes no pod
// that asks for any: the pod is "Insufficient ephemeral-storage"
// (kubernetes/kubernetes#63190; pingstatus/doc.go, rule
// resource-nonzero).

// insufficientScratch is how the scheduler says a node lacks scratch space.
const insufficientScratch = "Insufficient ephemeral-storage"

// createScratchPod creates a pod that asks for cpus and scratch space,
// for the virtual node alone (a node selector on its host name keeps it
// off any other node, so the scheduler's verdict is about that node),
// tolerating the provider's protected and static taints as createPod's
// pods do, and deletes it when the test ends.
func createScratchPod(t *testing.T, node, name, cpu, scratch string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": node},
			Tolerations: []corev1.Toleration{
				{Key: nodeapply.DefaultProtectedKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: vnode.StaticTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			},
			Containers: []corev1.Container{{Name: "job", Image: "example.com/job", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:              resource.MustParse(cpu),
				corev1.ResourceEphemeralStorage: resource.MustParse(scratch),
			}}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("pod %s: %v", name, err)
	}
	t.Cleanup(func() { deletePod(t, name) })
}

// pendingFor waits until the scheduler has found no node for the pod, and
// checks that it says why: the message of its PodScheduled condition
// holds reason.
func pendingFor(t *testing.T, pod, reason string) {
	t.Helper()
	message := pending(t, pod)
	if !strings.Contains(message, reason) {
		t.Errorf("%s is unschedulable, but not for %q: %s", pod, reason, message)
	}
	t.Logf("%s: %s", pod, message)
}

// scratchKept checks that nothing was lost at the end of a test: the node
// has the resources want in capacity and allocatable and none of those
// absent names, its protected and static taints, each pod of bound still
// on it and each of refused still unscheduled; and the API server refused
// none of the provider's writes.
func scratchKept(t *testing.T, p *vnode.Node, node string, want map[string]string, absent []corev1.ResourceName, bound, refused []string) {
	t.Helper()
	eventually(t, node+": nothing lost", func(ctx context.Context) (bool, string) {
		stored := stored(ctx, t, node)
		if ok, why := hasResources(stored, want); !ok {
			return false, why
		}
		for _, name := range absent {
			for _, list := range []corev1.ResourceList{stored.Status.Capacity, stored.Status.Allocatable} {
				if q, ok := list[name]; ok {
					return false, fmt.Sprintf("%s %s advertised", name, q.String())
				}
			}
		}
		if taints := taintSet(stored); !taints[protectedTaint] || !taints[staticTaint] {
			return false, "taints " + strings.Join(keys(taints), ", ")
		}
		for _, pod := range bound {
			if got, _, err := placement(ctx, pod); err != nil || got != node {
				return false, fmt.Sprintf("%s on %q (%v)", pod, got, err)
			}
		}
		for _, pod := range refused {
			if got, why, err := placement(ctx, pod); err != nil || got != "" || why == "" {
				return false, fmt.Sprintf("%s on %q, unschedulable %q (%v)", pod, got, why, err)
			}
		}
		return true, ""
	})
	noWriteErrors(t, p)
}

// TestScratchScheduler: a pod that asks for 1Gi of scratch space lands on
// a virtual node whose plugin reports resources.ephemeralStorage, and
// stays Pending, for the scheduler's "Insufficient ephemeral-storage", on
// one whose plugin does not and that was started without
// -ephemeral-storage: a node advertises no scratch space it was not told
// of, and the scheduler counts what it does not advertise as zero.
func TestScratchScheduler(t *testing.T) {
	needsControlPlane(t)
	const with, without = "vk-scratch-with", "vk-scratch-without"
	withResources := map[string]string{"cpu": "64", "memory": "256Gi", "ephemeral-storage": "100Gi"}
	withoutResources := map[string]string{"cpu": "64", "memory": "256Gi"}
	pWith, pluginWith := startProvider(t, with, time.Hour)
	pluginWith.reply(http.StatusOK, `{"resources":{"cpu":"64","memory":"256Gi","ephemeralStorage":"100Gi"}}`, 0)
	pWithout, pluginWithout := startProvider(t, without, time.Hour)
	pluginWithout.reply(http.StatusOK, `{"resources":{"cpu":"64","memory":"256Gi"}}`, 0)
	for node, want := range map[string]map[string]string{with: withResources, without: withoutResources} {
		schedulable(t, node)
		eventually(t, node+": the reply is stored", func(ctx context.Context) (bool, string) {
			return hasResources(stored(ctx, t, node), want)
		})
	}
	if _, ok := stored(t.Context(), t, without).Status.Allocatable[corev1.ResourceEphemeralStorage]; ok {
		t.Fatalf("%s advertises ephemeral-storage, though neither its plugin nor its configuration names any", without)
	}

	createScratchPod(t, with, "scratch-on-with", "1", "1Gi")
	createScratchPod(t, without, "scratch-on-without", "1", "1Gi")
	boundTo(t, "scratch-on-with", with)
	pendingFor(t, "scratch-on-without", insufficientScratch)

	scratchKept(t, pWith, with, withResources, nil, []string{"scratch-on-with"}, nil)
	scratchKept(t, pWithout, without, withoutResources, []corev1.ResourceName{corev1.ResourceEphemeralStorage}, nil, []string{"scratch-on-without"})
}

// scratchBackend simulates a plugin's backend of 16 cpus and 10Gi of
// scratch space, as controlplane_test.go's backend does for cpu: it
// reports what is available now (total minus what the pods it runs
// hold), and runs the pods the scheduler binds to its node.
type scratchBackend struct {
	t                *testing.T
	p                *vnode.Node
	plugin           *fakePlugin
	node             string
	countHeld        bool
	cpus, scratchGi  int // the total
	usedCPUs, usedGi int // what the pods it runs hold
	running          int // how many pods it runs
}

func (b *scratchBackend) report() {
	b.plugin.reply(http.StatusOK, fmt.Sprintf(`{"resources":{"cpu":"%d","memory":"64Gi","ephemeralStorage":"%dGi"}}`,
		b.cpus-b.usedCPUs, b.scratchGi-b.usedGi), 0)
}

// allocatable is what the node should advertise: the total when the pods'
// hold is counted, what is available otherwise.
func (b *scratchBackend) allocatable() map[string]string {
	if b.countHeld {
		return map[string]string{"cpu": fmt.Sprint(b.cpus), "ephemeral-storage": fmt.Sprintf("%dGi", b.scratchGi)}
	}
	return map[string]string{"cpu": fmt.Sprint(b.cpus - b.usedCPUs), "ephemeral-storage": fmt.Sprintf("%dGi", b.scratchGi-b.usedGi)}
}

// run starts a bound pod as controlplane_test.go's backend does: the free
// figures fall first, then the pod is Running, started now. It returns once
// the node advertises what it should after a ping that sees the pod
// running: with the pods' hold counted, once the provider's pod cache
// counts the pod and a ping sent since has been delivered, so that the
// total seen is not the one from before the pod ran.
func (b *scratchBackend) run(pod string, cpus, gi int) {
	b.t.Helper()
	b.usedCPUs, b.usedGi, b.running = b.usedCPUs+cpus, b.usedGi+gi, b.running+1
	b.report()
	got, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(b.t.Context(), pod, metav1.GetOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	now := metav1.NewTime(time.Now())
	got.Status.Phase, got.Status.StartTime = corev1.PodRunning, &now
	if _, err := client.CoreV1().Pods(metav1.NamespaceDefault).UpdateStatus(b.t.Context(), got, metav1.UpdateOptions{}); err != nil {
		b.t.Fatal(err)
	}
	if b.countHeld {
		eventually(b.t, pod+" counted as held", func(context.Context) (bool, string) {
			held := b.p.Held(time.Now())[corev1.ResourcePods]
			return held.Value() == int64(b.running), fmt.Sprintf("%s pods held", held.String())
		})
		pings := b.p.Count.Pings.Load()
		eventually(b.t, "a ping since", func(context.Context) (bool, string) { return b.p.Count.Pings.Load() >= pings+2, "pings" })
		settled(b.t, b.p, b.node)
	}
	want := b.allocatable()
	eventually(b.t, fmt.Sprintf("%s advertises %v", b.node, want), func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, b.t, b.node), want)
	})
}

// TestScratchHeld: a backend of 10Gi of scratch space, whose plugin
// reports what is available now. With what the node's running pods hold
// counted (the -held default), each such pod is counted once, as for cpu:
// the node keeps advertising the total, 10Gi, and the scheduler places
// the pods the backend can take, and exactly those: 4Gi, 4Gi, then not
// another 4Gi (2Gi are left), but 1Gi. With interLink's rule the node
// advertises what is available, the scheduler subtracts the running pods
// again, and a second 4Gi pod stays Pending though 6Gi are free.
func TestScratchHeld(t *testing.T) {
	needsControlPlane(t)
	for _, countHeld := range []bool{true, false} {
		t.Run(fmt.Sprintf("held=%v", countHeld), func(t *testing.T) {
			name := fmt.Sprintf("vk-scratch-held-%v", countHeld)
			p, plugin := startProvider(t, name, time.Hour, func(c *vnode.Config) { c.CountHeld = countHeld })
			b := &scratchBackend{t: t, p: p, plugin: plugin, node: name, countHeld: countHeld, cpus: 16, scratchGi: 10}
			b.report()
			schedulable(t, name)
			eventually(t, "the whole backend advertised", func(ctx context.Context) (bool, string) {
				return hasResources(stored(ctx, t, name), b.allocatable())
			})
			pod := func(i int) string { return fmt.Sprintf("scratch-held-%v-%d", countHeld, i) }

			createScratchPod(t, name, pod(1), "1", "4Gi")
			boundTo(t, pod(1), name)
			b.run(pod(1), 1, 4) // 6Gi free
			createScratchPod(t, name, pod(2), "1", "4Gi")
			if !countHeld {
				// 6Gi advertised, 4Gi bound: 2Gi of room as the scheduler
				// sees it, 6Gi in truth.
				pendingFor(t, pod(2), insufficientScratch)
				scratchKept(t, p, name, b.allocatable(), nil, []string{pod(1)}, []string{pod(2)})
				return
			}
			boundTo(t, pod(2), name)
			b.run(pod(2), 1, 4) // 2Gi free
			createScratchPod(t, name, pod(3), "1", "4Gi")
			pendingFor(t, pod(3), insufficientScratch)
			createScratchPod(t, name, pod(4), "1", "1Gi")
			boundTo(t, pod(4), name)
			b.run(pod(4), 1, 1) // 1Gi free
			if got, want := b.usedGi, 9; got != want {
				t.Errorf("the backend runs %dGi, want %dGi", got, want)
			}
			scratchKept(t, p, name, b.allocatable(), nil, []string{pod(1), pod(2), pod(4)}, []string{pod(3)})
		})
	}
}

// TestScratchStatic: a node started with -ephemeral-storage 50Gi
// (Config.StaticResources, through the flags and Fleet as the program
// does) advertises 50Gi from registration, while its plugin answers "ok"
// and reports nothing, and the scheduler places a pod that asks for 10Gi.
// Once the plugin reports 100Gi, its figure replaces the static one: a pod
// asking for 60Gi more lands (against 50Gi it would not), one asking for
// 31Gi more stays Pending (100Gi - 70Gi bound), and a later reply that
// does not name scratch space leaves the plugin's figure.
func TestScratchStatic(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-scratch-static"
	p, plugin := startProvider(t, name, time.Hour, func(c *vnode.Config) {
		parsed := configOfArgs(t, "-node", c.Static.Name, "-plugin", c.PluginURL, "-ephemeral-storage", "50Gi")
		c.Static, c.StaticResources = parsed.Static, parsed.StaticResources
	})
	schedulable(t, name)
	static := map[string]string{"cpu": "100", "memory": "128Gi", "pods": "100", "ephemeral-storage": "50Gi"}
	if ok, why := hasResources(stored(t.Context(), t, name), static); !ok {
		t.Fatalf("as registered, before the plugin reports: %s", why)
	}
	createScratchPod(t, name, "scratch-static-10", "1", "10Gi")
	boundTo(t, "scratch-static-10", name)

	plugin.reply(http.StatusOK, `{"resources":{"cpu":"64","ephemeralStorage":"100Gi"}}`, 0)
	reported := map[string]string{"cpu": "64", "memory": "128Gi", "pods": "100", "ephemeral-storage": "100Gi"}
	eventually(t, "the plugin's figure replaces the static one", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), reported)
	})
	// A pod that fits only in the plugin's figure: bound, whether or not
	// the scheduler saw the node's update before the pod.
	createScratchPod(t, name, "scratch-static-60", "1", "60Gi")
	boundTo(t, "scratch-static-60", name)
	createScratchPod(t, name, "scratch-static-31", "1", "31Gi")
	pendingFor(t, "scratch-static-31", insufficientScratch)

	plugin.reply(http.StatusOK, `{"resources":{"cpu":"32"}}`, 0)
	reported["cpu"] = "32"
	eventually(t, "a reply without scratch space is stored", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), reported)
	})
	pings := p.Count.Pings.Load()
	eventually(t, "five more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+5, "pings" })
	scratchKept(t, p, name, reported, nil, []string{"scratch-static-10", "scratch-static-60"}, []string{"scratch-static-31"})
}
