package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// TestNotReadyTaints: Ready False makes the real node lifecycle controller
// taint the node not-ready (NoSchedule, and NoExecute since another node
// of the zone is healthy); pingnode neither removes those taints nor takes
// them over; no new pod is bound meanwhile; after recovery the controller
// lifts them and the pod lands. Nothing the node had is lost.
func TestNotReadyTaints(t *testing.T) {
	needsControlPlane(t)
	const name, healthy = "vk-notready", "vk-notready-neighbour"
	startProvider(t, healthy, 5*time.Second) // keeps the zone from counting as fully disrupted
	p, plugin := startProvider(t, name, 5*time.Second, func(c *vnode.Config) { c.Grace = testGrace })
	plugin.reply(http.StatusOK, goodReply, 0)
	schedulable(t, name)
	eventually(t, "the good reply is stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, false) })

	plugin.reply(http.StatusInternalServerError, "down", 0)
	eventually(t, "the controller's not-ready taints", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionFalse); !ok {
			return false, why
		}
		taints := allTaints(node)
		return taints["node.kubernetes.io/not-ready:NoSchedule"] && taints["node.kubernetes.io/not-ready:NoExecute"],
			"taints " + strings.Join(keys(taints), ", ")
	})
	createPod(t, name, "while-not-ready", podSpec{cpu: "1", tolerate: []corev1.Toleration{ // the plugin's taint, not the controller's
		{Key: "vendor.example.com/maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}})
	t.Logf("while not ready: %s", pending(t, "while-not-ready"))
	pings := p.Count.Pings.Load()
	eventually(t, "ten more failed pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+10, "pings" })
	node := stored(t.Context(), t, name)
	if taints := allTaints(node); !taints["node.kubernetes.io/not-ready:NoSchedule"] || !taints["node.kubernetes.io/not-ready:NoExecute"] {
		t.Errorf("the not-ready taints went while the plugin still fails: %v", keys(taints))
	}
	if owned := node.Annotations[nodeapply.DefaultOwnershipAnnotation]; strings.Contains(owned, "node.kubernetes.io") {
		t.Errorf("pingnode took over a controller's taint: %q", owned)
	}
	if got, _, _ := placement(t.Context(), "while-not-ready"); got != "" {
		t.Errorf("a pod was bound to %s while it was not ready", got)
	}

	plugin.reply(http.StatusOK, goodReply, 0)
	schedulable(t, name)
	boundTo(t, "while-not-ready", name)
	eventually(t, "nothing lost", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, false) })
}

// allTaints is a node's taints as key=value:Effect strings, the
// controllers' among them.
func allTaints(node *corev1.Node) map[string]bool {
	set := map[string]bool{}
	for _, t := range node.Spec.Taints {
		set[t.ToString()] = true
	}
	return set
}

// backend simulates a plugin's backend of 64 cpus: it reports what is
// available now, and runs the pods the scheduler binds to its node.
type backend struct {
	t      *testing.T
	plugin *fakePlugin
	node   string
	total  int
	used   int
}

func (b *backend) report() {
	b.plugin.reply(http.StatusOK, fmt.Sprintf(`{"resources":{"cpu":"%d"}}`, b.total-b.used), 0)
}

// run starts a bound pod: the backend's free figure falls first, then the
// pod is Running, started now: a ping sent before this moment does not
// count it as held, and a later one finds it in the figures already.
func (b *backend) run(pod string, cpus int) {
	b.used += cpus
	b.report()
	p, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(b.t.Context(), pod, metav1.GetOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	now := metav1.NewTime(time.Now())
	p.Status.Phase, p.Status.StartTime = corev1.PodRunning, &now
	if _, err := client.CoreV1().Pods(metav1.NamespaceDefault).UpdateStatus(b.t.Context(), p, metav1.UpdateOptions{}); err != nil {
		b.t.Fatal(err)
	}
}

// startBackend runs a provider for a backend of 64 cpus that runs none of
// the node's pods yet, and waits until the node is schedulable with all
// 64.
func startBackend(t *testing.T, name string, countHeld bool) *backend {
	t.Helper()
	_, plugin := startProvider(t, name, time.Hour, func(c *vnode.Config) { c.CountHeld = countHeld })
	b := &backend{t: t, plugin: plugin, node: name, total: 64}
	b.report()
	schedulable(t, name)
	allocatableCPU(t, name, 64)
	return b
}

// allocatableCPU waits until the node's allocatable cpu is want.
func allocatableCPU(t *testing.T, name string, want int) {
	t.Helper()
	eventually(t, fmt.Sprintf("allocatable cpu %d", want), func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), map[string]string{"cpu": fmt.Sprint(want)})
	})
}

// TestHeldRoom: a backend of 64 cpus runs 32 cpus of this node's pods and
// reports 32 available. With what the pods hold counted, a 32-cpu pod is
// bound and a 33-cpu pod stays Pending; with interLink's rule the 32-cpu
// pod stays Pending too, though 32 cpus are idle.
func TestHeldRoom(t *testing.T) {
	needsControlPlane(t)
	for _, countHeld := range []bool{true, false} {
		t.Run(fmt.Sprintf("held=%v", countHeld), func(t *testing.T) {
			name := fmt.Sprintf("vk-held-%v", countHeld)
			b := startBackend(t, name, countHeld)
			createPod(t, name, "running-32", podSpec{cpu: "32"})
			boundTo(t, "running-32", name)
			b.run("running-32", 32)
			if countHeld {
				allocatableCPU(t, name, 64) // 32 available + 32 held
			} else {
				allocatableCPU(t, name, 32)
			}
			createPod(t, name, "needs-33", podSpec{cpu: "33"})
			t.Logf("33 cpus: %s", pending(t, "needs-33"))
			createPod(t, name, "needs-32", podSpec{cpu: "32"})
			if countHeld {
				boundTo(t, "needs-32", name)
			} else {
				t.Logf("32 cpus, interLink's rule: %s", pending(t, "needs-32"))
			}
		})
	}
}

// TestHeldFill: the same stream of 100 pods of 1 to 8 cpus, each bound or
// refused by the real scheduler in turn, against a backend of 64 cpus,
// with and without what the node's pods hold counted. Counting what they
// hold fills more of the backend: with these seeds, all 64 cpus, against
// 36 (56%) with interLink's rule, as the test logs.
func TestHeldFill(t *testing.T) {
	needsControlPlane(t)
	sizes := make([]int, 100)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range sizes {
		sizes[i] = 1 + r.IntN(8)
	}
	filled := map[bool]int{}
	for _, countHeld := range []bool{true, false} {
		t.Run(fmt.Sprintf("held=%v", countHeld), func(t *testing.T) {
			name := fmt.Sprintf("vk-fill-%v", countHeld)
			b := startBackend(t, name, countHeld)
			placed, refused := 0, 0
			for i, cpus := range sizes {
				if b.used == b.total {
					break // full: a plugin reports no zero cpu
				}
				pod := fmt.Sprintf("fill-%d", i)
				createPod(t, name, pod, podSpec{cpu: fmt.Sprint(cpus)})
				var node string
				eventually(t, pod+" placed or refused", func(ctx context.Context) (bool, string) {
					got, why, err := placement(ctx, pod)
					if err != nil {
						return false, err.Error()
					}
					node = got
					return got != "" || why != "", "not tried yet"
				})
				if node == "" {
					refused++
					deletePod(t, pod)
					continue
				}
				placed++
				b.run(pod, cpus)
				if countHeld {
					allocatableCPU(t, name, b.total)
				} else {
					allocatableCPU(t, name, b.total-b.used)
				}
			}
			filled[countHeld] = b.used
			t.Logf("held=%v: %d pods placed, %d refused, %d of %d cpus used (%.0f%%)",
				countHeld, placed, refused, b.used, b.total, 100*float64(b.used)/float64(b.total))
		})
	}
	if filled[true] <= filled[false] {
		t.Errorf("counting held filled %d cpus, interLink's rule %d: want more", filled[true], filled[false])
	}
	t.Logf("filled: %d of 64 cpus counting held, %d with interLink's rule", filled[true], filled[false])
}
