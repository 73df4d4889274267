package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/logcount"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/supervise"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// A provider of its plugin's parts (-parts) against the real control
// plane: the scheduler places pods on the parts' nodes by each part's own
// figures, and the node lifecycle controller evicts the pods of a part
// that left once its grace is over.

// shiftedClock is the wall clock moved on by the test (the time of the
// pings of a plugin client: pingclient.Config.Now): the part grace runs
// on the test's word, while the control plane's own timers (the node
// lifecycle controller, the taint eviction controller) run as they do.
type shiftedClock struct{ shift atomic.Int64 }

func (c *shiftedClock) now() time.Time { return time.Now().Add(time.Duration(c.shift.Load())) }

// startPartsPlugin serves reply, as a plugin's status endpoint, until the
// test ends.
func startPartsPlugin(t *testing.T, reply string) *fakePlugin {
	t.Helper()
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, reply, 0)
	plugin.server = httptest.NewServer(plugin)
	t.Cleanup(plugin.server.Close)
	return plugin
}

// newPartsProvider returns the supervisor of cfg, a configuration with
// Parts, which runs as a ServiceAccount of its own bound to exactly the
// rights internal/rights gives its configuration, each part's node with a
// client of its own, logging to the test's output; it does not run yet.
// When the test ends, what the provider leaves of the nodes of parts
// (each node, its Lease and its events) is deleted; what an earlier run
// that was killed left of them is deleted now.
func newPartsProvider(t *testing.T, cfg vnode.Config, partNames ...string) *supervise.PartsSupervisor {
	t.Helper()
	return newPartsProviderLogging(t, cfg, slog.NewTextHandler(t.Output(), nil), partNames...)
}

// newPartsProviderLogging is newPartsProvider, whose supervisor logs to h.
func newPartsProviderLogging(t *testing.T, cfg vnode.Config, h slog.Handler, partNames ...string) *supervise.PartsSupervisor {
	t.Helper()
	needsControlPlane(t)
	names := make([]string, len(partNames))
	for i, part := range partNames {
		names[i] = cfg.Parts.NodeName(part)
		deleteNode(t, names[i])
	}
	forgetNodes(t, names...) // after the provider stops: its cleanup runs first
	id := grant(t, cfg.Parts.Owner, accessFor("", "", []vnode.Config{cfg}, nil))
	newClient := func() (kubernetes.Interface, error) { return kubernetes.NewForConfig(id.config) }
	return supervise.NewParts(cfg, id.client, newClient, slog.New(h))
}

// runSupervisor runs s until the test ends.
func runSupervisor(t *testing.T, s *supervise.PartsSupervisor) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the provider of parts: %v", err)
		}
	})
}

// stepSupervisor runs s until the test ends, parked before each ping of
// its plugin: step lets pings through, one at a time (parkedSteps).
func stepSupervisor(t *testing.T, s *supervise.PartsSupervisor) (step func(n int)) {
	t.Helper()
	return parkedSteps(t, func(hook func(context.Context)) {
		s.BeforePing.Set(hook)
	}, func() { runSupervisor(t, s) })
}

// partPod is a pod for the nodes of the owner's parts (a node selector
// keeps it off any other node), with selector besides, that tolerates
// the provider's taints and tolerate, and asks for cpu.
func partPod(name, owner string, selector map[string]string, cpu string, tolerate ...corev1.Toleration) *corev1.Pod {
	nodeSelector := map[string]string{vnode.OwnerLabel: owner}
	for k, v := range selector {
		nodeSelector[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeSelector: nodeSelector,
			Tolerations:  append(providerTolerations(), tolerate...),
			Containers: []corev1.Container{{Name: "job", Image: podImage, Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
}

// partsReady waits until the node of each part is registered with cpus
// cpus, Ready, and free of the node lifecycle controller's taints, and
// returns their UIDs, by part.
func partsReady(t *testing.T, p *vnode.Parts, cpus string, partNames ...string) map[string]types.UID {
	t.Helper()
	uids := map[string]types.UID{}
	for _, part := range partNames {
		name := p.NodeName(part)
		eventually(t, name+" registered with its part's figures", func(ctx context.Context) (bool, string) {
			node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if ok, why := hasResources(node, map[string]string{"cpu": cpus}); !ok {
				return false, why
			}
			uids[part] = node.UID
			return conditionIs(node, corev1.NodeReady, corev1.ConditionTrue)
		})
		schedulable(t, name)
	}
	return uids
}

// partsKept reports whether nothing was lost: the node of each part of
// uids is stored with its UID, still labelled as the owner's part, and
// each pod of pods (pod to node) is bound to its node and not being
// deleted.
func partsKept(ctx context.Context, p *vnode.Parts, uids map[string]types.UID, pods map[string]string) (bool, string) {
	for part, uid := range uids {
		node, err := client.CoreV1().Nodes().Get(ctx, p.NodeName(part), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if node.UID != uid || !p.Owns(node) {
			return false, fmt.Sprintf("%s: UID %s, labels %v; want UID %s, the provider's", node.Name, node.UID, node.Labels, uid)
		}
	}
	for pod, node := range pods {
		got, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if got.Spec.NodeName != node || got.DeletionTimestamp != nil {
			return false, fmt.Sprintf("%s on %q, being deleted %v; want it on %s", pod, got.Spec.NodeName, got.DeletionTimestamp != nil, node)
		}
	}
	return true, ""
}

// ownedNodes are the names of the nodes with the owner's ownership label.
func ownedNodes(ctx context.Context, t *testing.T, owner string) []string {
	t.Helper()
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: vnode.OwnerLabel + "=" + owner})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	return names
}

// TestPartsScheduling: a plugin whose 24 machines each have 1 cpu free,
// served as parts, is 24 nodes of 1 cpu: a pod asking for 4 stays Pending
// ("Insufficient cpu"), and a pod asking for 1 lands on a part's node.
// The same backend as one node, whose plugin sums the machines (cpu 24),
// takes the pod of 4 cpus, though no machine has room for it: what parts
// are for.
func TestPartsScheduling(t *testing.T) {
	needsControlPlane(t)
	const template, owner, sum = "vk-psched-{part}", "vk-psched", "vk-psched-sum"
	machines := make([]string, 24)
	for i := range machines {
		machines[i] = fmt.Sprintf("cn%02d", i+1)
	}
	plugin := startPartsPlugin(t, partsReply(1, machines...))
	cfg := partsConfig(plugin.server.URL+"/status", template, owner, 0)
	cfg.Interval, cfg.Timeout = 500*time.Millisecond, 300*time.Millisecond
	s := newPartsProvider(t, cfg, machines...)
	runSupervisor(t, s)
	uids := partsReady(t, cfg.Parts, "1", machines...)
	if got := ownedNodes(t.Context(), t, owner); len(got) != len(machines) {
		t.Fatalf("nodes of the parts: %v, want one for each of the %d machines", got, len(machines))
	}

	createTestPod(t, partPod("psched-four", owner, nil, "4"))
	why := pending(t, "psched-four")
	if !strings.Contains(why, "Insufficient cpu") {
		t.Errorf("the pod of 4 cpus is unschedulable for %q, want Insufficient cpu", why)
	}
	t.Logf("as parts, a pod of 4 cpus: %s", why)
	createTestPod(t, partPod("psched-one", owner, nil, "1"))
	var landed string
	eventually(t, "the pod of 1 cpu lands on a part's node", func(ctx context.Context) (bool, string) {
		node, why, err := placement(ctx, "psched-one")
		if err != nil {
			return false, err.Error()
		}
		landed = node
		return strings.HasPrefix(node, "vk-psched-cn"), "unschedulable: " + why
	})
	t.Logf("as parts, a pod of 1 cpu: on %s", landed)

	// The same backend as one node.
	_, sumPlugin := startProvider(t, sum, time.Hour)
	sumPlugin.reply(http.StatusOK, `{"status":"ok","resources":{"cpu":"24","memory":"96Gi"}}`, 0)
	eventually(t, "the sum is stored", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, sum), map[string]string{"cpu": "24"})
	})
	schedulable(t, sum)
	createPod(t, sum, "psched-four-sum", podSpec{cpu: "4"})
	boundTo(t, "psched-four-sum", sum)
	t.Logf("as one node of 24 cpus, the pod of 4 cpus lands: no machine has room for it")

	if got, why, _ := placement(t.Context(), "psched-four"); got != "" {
		t.Errorf("the pod of 4 cpus went to %s on the parts (%s)", got, why)
	}
	eventually(t, "nothing lost", func(ctx context.Context) (bool, string) {
		return partsKept(ctx, cfg.Parts, uids, map[string]string{"psched-one": landed})
	})
}

// TestPartsGone: parts that leave the reply, against the real node
// lifecycle controller, taint eviction controller and scheduler, with a
// part grace of an hour on the plugin's clock, which the test moves on.
// Both nodes are tainted part-gone at once, and a new pod that selects
// one of them by its part stays Pending; the part that comes back within
// the grace keeps its node and its pod, and loses the taint. Once the
// other's grace is over its node turns Ready False (PartGone), its pod,
// which tolerates not-ready for 5 s, is evicted, and the provider
// finishes its deletion (the pod's grace period is 30 s, and no kubelet
// ends it); then, no pod holding it, the node is deleted.
// Nothing else is lost.
func TestPartsGone(t *testing.T) {
	needsControlPlane(t)
	const template, owner = "vk-pgone-{part}", "vk-pgone"
	const gone, back, stays = "cn1", "cn2", "cn3"
	const goneGrace = time.Hour
	plugin := startPartsPlugin(t, partsReply(4, gone, back, stays))
	cfg := partsConfig(plugin.server.URL+"/status", template, owner, goneGrace)
	clock := &shiftedClock{}
	cfg.Transport.Now = clock.now
	s := newPartsProvider(t, cfg, gone, back, stays)
	step := stepSupervisor(t, s)
	stepping := func(what string, check func(ctx context.Context) (bool, string)) {
		t.Helper()
		within(t, time.Minute, what, func(ctx context.Context) (bool, string) {
			step(1)
			return check(ctx)
		})
	}
	node := func(ctx context.Context, part string) (*corev1.Node, error) {
		return client.CoreV1().Nodes().Get(ctx, cfg.Parts.NodeName(part), metav1.GetOptions{})
	}
	step(1)
	uids := partsReady(t, cfg.Parts, "4", gone, back, stays)

	// A running pod on each leaving part: bound at once, the first
	// tolerating not-ready for 5 s, the second for admission's 300 s.
	seconds := int64(outageToleration / time.Second)
	running := partPod("pgone-run", owner, nil, "1",
		corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds})
	running.Spec.NodeName = cfg.Parts.NodeName(gone)
	running.Spec.TerminationGracePeriodSeconds = nil // 30 s: its deletion waits for the provider to finish it
	createTestPod(t, running)
	staying := partPod("pgone-stay", owner, nil, "1")
	staying.Spec.NodeName = cfg.Parts.NodeName(back)
	createTestPod(t, staying)
	eventually(t, "each part's node holds its pod, in its cache", func(context.Context) (bool, string) {
		// The supervisor is parked: its nodes are the test's to read.
		return s.Pods(gone) == 1 && s.Pods(back) == 1, "not yet"
	})

	// Both leave: tainted part-gone at once.
	plugin.reply(http.StatusOK, partsReply(4, stays), 0)
	left := metav1.NewTime(clock.now().UTC().Truncate(time.Second))
	step(1)
	for _, part := range []string{gone, back} {
		eventually(t, part+" is tainted part-gone", func(ctx context.Context) (bool, string) {
			n, err := node(ctx, part)
			if err != nil {
				return false, err.Error()
			}
			since := partGoneSince(n)
			if since == nil || since.Sub(left.Time) > time.Second || left.Sub(since.Time) > time.Second {
				return false, fmt.Sprintf("part-gone since %v, want about %v", since, left)
			}
			return true, ""
		})
	}
	createTestPod(t, partPod("pgone-new", owner, map[string]string{vnode.PartLabel: gone}, "1"))
	why := pending(t, "pgone-new")
	if keptOff := untolerated(t, "pgone-new", cfg.Parts.NodeName(gone)); !slices.Contains(keptOff, nodeapply.PartGoneTaintKey+":NoSchedule") {
		t.Errorf("a new pod for the gone part: %s; untolerated %v, want the part-gone taint among them", why, keptOff)
	}

	// One comes back within the grace: it keeps its node and its pod.
	plugin.reply(http.StatusOK, partsReply(4, back, stays), 0)
	step(1)
	eventually(t, back+" loses the part-gone taint", func(ctx context.Context) (bool, string) {
		n, err := node(ctx, back)
		if err != nil {
			return false, err.Error()
		}
		return partGoneSince(n) == nil, fmt.Sprintf("taints %v", n.Spec.Taints)
	})

	// The other's grace is over: Ready False, the pod evicted and its
	// deletion finished, then the node deleted, never before the pod.
	clock.shift.Store(int64(goneGrace))
	stepping(gone+" turns Ready False, part gone", func(ctx context.Context) (bool, string) {
		n, err := node(ctx, gone)
		if err != nil {
			return false, err.Error()
		}
		if c := vnode.ConditionNamed(n, corev1.NodeReady); c == nil || c.Status != corev1.ConditionFalse || c.Reason != nodeapply.ReasonPartGone {
			return false, fmt.Sprintf("Ready %+v", c)
		}
		return true, ""
	})
	stepping("the pod of the gone part is evicted and gone, then its node", func(ctx context.Context) (bool, string) {
		_, podErr := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, "pgone-run", metav1.GetOptions{})
		_, nodeErr := node(ctx, gone)
		switch {
		case apierrors.IsNotFound(nodeErr) && !apierrors.IsNotFound(podErr):
			t.Fatalf("%s deleted while its pod is there: %v", gone, podErr)
		case !apierrors.IsNotFound(podErr):
			return false, "the pod is still there"
		}
		return apierrors.IsNotFound(nodeErr), "the node is still there"
	})
	if n := s.Count.Deleted.Load(); n != 1 {
		t.Errorf("%d nodes deleted, want the gone part's", n)
	}
	evictions, err := client.CoreV1().Events(metav1.NamespaceDefault).List(t.Context(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=pgone-run,reason=TaintManagerEviction",
	})
	if err != nil || len(evictions.Items) == 0 {
		t.Errorf("the gone part's pod was not evicted by the taint eviction controller: %v", err)
	}
	if got, _, _ := placement(t.Context(), "pgone-new"); got != "" {
		t.Errorf("the new pod for the gone part landed on %s", got)
	}
	delete(uids, gone)
	step(3)
	eventually(t, "nothing else lost", func(ctx context.Context) (bool, string) {
		if ok, why := partsKept(ctx, cfg.Parts, uids, map[string]string{"pgone-stay": cfg.Parts.NodeName(back)}); !ok {
			return false, why
		}
		n, err := node(ctx, back)
		if err != nil {
			return false, err.Error()
		}
		return conditionIs(n, corev1.NodeReady, corev1.ConditionTrue)
	})
}

// TestPartsPluginDown: a failed ping (the plugin answers 503) changes no
// part, however long it lasts on the plugin's clock, past the part grace:
// a provider whose plugin fails from its start registers no node, and
// once its parts' nodes are registered, an outage deletes none, leaves
// none, registers none, and turns each node's connectivity condition
// False; the first answer turns them True again, with nothing lost.
func TestPartsPluginDown(t *testing.T) {
	needsControlPlane(t)
	const template, owner = "vk-pdown-{part}", "vk-pdown"
	plugin := startPartsPlugin(t, "")
	plugin.reply(http.StatusServiceUnavailable, "down", 0)
	cfg := partsConfig(plugin.server.URL+"/status", template, owner, time.Second)
	clock := newTestClock()
	cfg.Transport.Now = clock.now
	s := newPartsProvider(t, cfg, "cn1", "cn2")
	step := stepSupervisor(t, s)
	for range 3 {
		clock.advance(10 * time.Second)
		step(1)
	}
	if got := ownedNodes(t.Context(), t, owner); len(got) != 0 || s.Count.Registered.Load() != 0 || s.Failures.Load() != 3 {
		t.Fatalf("a plugin that fails from the start: nodes %v, %d registered, %d failures; want none, none, 3", got, s.Count.Registered.Load(), s.Failures.Load())
	}

	plugin.reply(http.StatusOK, partsReply(2, "cn1", "cn2"), 0)
	step(1)
	uids := partsReady(t, cfg.Parts, "2", "cn1", "cn2")
	connectivityIs := func(status corev1.ConditionStatus) func(context.Context) (bool, string) {
		return func(ctx context.Context) (bool, string) {
			for part := range uids {
				n, err := client.CoreV1().Nodes().Get(ctx, cfg.Parts.NodeName(part), metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				if ok, why := conditionIs(n, nodeapply.DefaultConnectivityCondition, status); !ok {
					return false, part + ": " + why
				}
				if since := partGoneSince(n); since != nil {
					return false, part + " is tainted part-gone"
				}
			}
			return true, ""
		}
	}

	plugin.reply(http.StatusServiceUnavailable, "down", 0)
	for range 3 { // 30 s on the plugin's clock: 30 times the part grace
		clock.advance(10 * time.Second)
		step(1)
	}
	eventually(t, "each node's connectivity False, none left", connectivityIs(corev1.ConditionFalse))
	if s.Count.Registered.Load() != 2 || s.Count.Deleted.Load() != 0 {
		t.Errorf("during the outage: %d registered, %d deleted; want 2, none", s.Count.Registered.Load(), s.Count.Deleted.Load())
	}
	if ok, why := partsKept(t.Context(), cfg.Parts, uids, nil); !ok {
		t.Errorf("during the outage: %s", why)
	}

	plugin.reply(http.StatusOK, partsReply(2, "cn1", "cn2"), 0)
	clock.advance(10 * time.Second)
	step(1)
	eventually(t, "each node's connectivity True again", connectivityIs(corev1.ConditionTrue))
	eventually(t, "nothing lost", func(ctx context.Context) (bool, string) { return partsKept(ctx, cfg.Parts, uids, nil) })
	if got := ownedNodes(t.Context(), t, owner); len(got) != 2 {
		t.Errorf("nodes %v, want the two parts'", got)
	}
}

// TestPartsSamplePlugin: every setting at its default but -parts, and the
// sample plugin as shipped serving its parts (examples/plugin -parts
// testdata/parts.json): a node for each, named pingnode-virtual-{part},
// with the part's figures, labels and taints, Ready; the devices of the
// GPU machine ignored without -dra-driver, said once.
func TestPartsSamplePlugin(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t, "-parts", "../plugin/testdata/parts.json")
	cfg := configOfArgs(t, "-parts", "-plugin", url)
	if cfg.Parts.Template != DefaultPartsNode || cfg.Parts.Owner != "pingnode-virtual-part" || cfg.Interval != 5*time.Second {
		t.Fatalf("the defaults: %+v, interval %s", cfg.Parts, cfg.Interval)
	}
	machines := map[string]map[string]string{ // testdata/parts.json
		"cn001": {"cpu": "40", "memory": "160000Mi"},
		"cn002": {"cpu": "48", "memory": "192000Mi"},
		"gpu01": {"cpu": "64", "memory": "512000Mi"},
	}
	ignored := logcount.New(t.Output(), "which only -dra-driver publishes")
	s := newPartsProviderLogging(t, cfg, ignored, "cn001", "cn002", "gpu01")
	runSupervisor(t, s)
	for part, want := range machines {
		name := cfg.Parts.NodeName(part)
		within(t, time.Minute, name+" has its machine's figures and labels", func(ctx context.Context) (bool, string) {
			node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if ok, why := hasResources(node, want); !ok {
				return false, why
			}
			partition := "cpu"
			if part == "gpu01" {
				partition = "gpu"
			}
			if got := node.Labels["feature.node.kubernetes.io/slurm-partition"]; got != partition || node.Labels[vnode.PartLabel] != part {
				return false, fmt.Sprintf("labels %v", node.Labels)
			}
			if drained := taintSet(node)["slurm.example.com/drain=maintenance:NoSchedule"]; drained != (part == "cn002") {
				return false, fmt.Sprintf("taints %v", keys(taintSet(node)))
			}
			return conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue)
		})
		schedulable(t, name)
	}
	names := make([]string, 0, len(machines))
	for part := range machines {
		names = append(names, cfg.Parts.NodeName(part))
	}
	leasesRenewed(t, names...)
	pings := s.Pings.Load()
	within(t, time.Minute, "two more pings", func(context.Context) (bool, string) {
		return s.Pings.Load() >= pings+2, "pings"
	})
	if n := ignored.Count(); n != 1 {
		t.Errorf("the devices ignored were said %d times, want once", n)
	}
	if got := ownedNodes(t.Context(), t, cfg.Parts.Owner); len(got) != len(machines) {
		t.Errorf("nodes %v, want one for each machine", got)
	}
}

// leasesRenewed waits until each node's Lease is the kubelet's (held by
// the node, owned by it by its UID, of the default duration) and has been
// renewed since it was first seen: the supervisor's renewer renews the
// Leases of the parts' nodes (internal/leases).
func leasesRenewed(t *testing.T, names ...string) {
	t.Helper()
	first := map[string]time.Time{}
	within(t, time.Minute, fmt.Sprintf("the Leases of %v renewed", names), func(ctx context.Context) (bool, string) {
		for _, name := range names {
			node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			lease, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			switch {
			case lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != name:
				return false, fmt.Sprintf("%s: holder %v", name, lease.Spec.HolderIdentity)
			case lease.Spec.LeaseDurationSeconds == nil || *lease.Spec.LeaseDurationSeconds != int32(vnode.DefaultLeaseDuration/time.Second):
				return false, fmt.Sprintf("%s: duration %v", name, lease.Spec.LeaseDurationSeconds)
			case len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].Kind != "Node" || lease.OwnerReferences[0].UID != node.UID:
				return false, fmt.Sprintf("%s: owners %v, want the node %s", name, lease.OwnerReferences, node.UID)
			case lease.Spec.RenewTime == nil:
				return false, name + ": never renewed"
			}
			renewed := lease.Spec.RenewTime.Time
			if was, seen := first[name]; !seen {
				first[name] = renewed
				return false, name + ": seen once"
			} else if !renewed.After(was) {
				return false, fmt.Sprintf("%s: renewed at %v, as first seen", name, renewed)
			}
		}
		return true, ""
	})
}
