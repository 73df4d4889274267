package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// The rights of a provider that publishes devices, with its own token:
// what RBAC gives it, what the admission policy fences, and what breaks
// without each rule.

// testSlice is a ResourceSlice of one device, a100-0, in the pool of node
// of driver, on node.
func testSlice(driver, node string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{GenerateName: node + "-"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: driver, NodeName: &node,
			Pool:    resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "a100-0"}},
		},
	}
}

// podEvent is an event on a pod of reason, recorded from host.
func podEvent(reason, host string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "dra-fence.", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: metav1.NamespaceDefault, Name: "dra-fence", UID: types.UID("dra-fence")},
		Reason:         reason, Message: "a test", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: vnode.FieldManager, Host: host},
	}
}

// TestDeviceFence: with the provider's own token, RBAC alone lets it
// write a ResourceSlice of any node and any driver (it cannot name them).
// The admission policy of -print-node-policy (with -dra-driver) refuses,
// with 403 Forbidden (the policy's reason, Forbidden: a denial by a
// ValidatingAdmissionPolicy is a 403 unless the policy says otherwise),
// a slice of another node, one of another driver on its own node, an
// update and a delete of another node's slice, and events on pods but
// those of their devices from its own node; it allows its own slice, its
// update and its delete.
func TestDeviceFence(t *testing.T) {
	needsControlPlane(t)
	const driver, foreignDriver, own, other = "fence.gpu.pingnode.example.com", "other.gpu.example.com", "vk-dra-fence", "vk-dra-fence-other"
	ctx := t.Context()
	cfg := testConfig(own, "http://127.0.0.1:1/status")
	cfg.DRADriver = driver
	id := grant(t, own, accessFor("", "", []vnode.Config{cfg}, nil))
	sa := id.client.ResourceV1().ResourceSlices()
	for _, s := range [][2]string{{driver, own}, {driver, other}, {foreignDriver, own}} {
		deleteSlicesAtEnd(t, s[0], s[1])
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	create := func(ctx context.Context, s *resourcev1.ResourceSlice) error {
		_, err := sa.Create(ctx, s, dryRun)
		return err
	}
	for _, s := range []*resourcev1.ResourceSlice{testSlice(driver, other), testSlice(foreignDriver, own)} {
		if err := create(ctx, s); err != nil {
			t.Errorf("RBAC alone: the provider creates a slice of %s on %s: %v, want it created", s.Spec.Driver, *s.Spec.NodeName, err)
		}
	}
	// Another node's slice, as its driver wrote it.
	foreign, err := client.ResourceV1().ResourceSlices().Create(ctx, testSlice(driver, other), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	installPolicy(ctx, t, id.access.Policy())
	const refusal = "may write only ResourceSlices of its driver " + driver + " on its own nodes"
	eventually(t, "the policy is in force", func(ctx context.Context) (bool, string) {
		err := create(ctx, testSlice(driver, other))
		return err != nil && strings.Contains(err.Error(), refusal), errorText(err)
	})
	mine, err := sa.Create(ctx, testSlice(driver, own), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("with the policy, the provider may not create its own slice: %v", err)
	}
	update := func(s *resourcev1.ResourceSlice) func(context.Context) error {
		return func(ctx context.Context) error {
			s = s.DeepCopy()
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: "a100-1"})
			_, err := sa.Update(ctx, s, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	remove := func(s *resourcev1.ResourceSlice) func(context.Context) error {
		return func(ctx context.Context) error {
			return sa.Delete(ctx, s.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}
	}
	event := func(reason, host string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := id.client.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, podEvent(reason, host), dryRun)
			return err
		}
	}
	const eventRefusal = "on pods only which devices they were given"
	for _, c := range []struct {
		what    string
		do      func(context.Context) error
		refusal string // "": allowed
	}{
		{"update its own slice", update(mine), ""},
		{"delete its own slice", remove(mine), ""},
		{"create a slice of another node", func(ctx context.Context) error { return create(ctx, testSlice(driver, other)) }, refusal},
		{"create a slice of another driver on its own node", func(ctx context.Context) error { return create(ctx, testSlice(foreignDriver, own)) }, refusal},
		{"update another node's slice", update(foreign), refusal},
		{"delete another node's slice", remove(foreign), refusal},
		{"tell a pod its devices, from its node", event(vnode.ReasonDevicesGiven, own), ""},
		{"refuse a pod its claim, from its node", event(vnode.ReasonClaimNotAllowed, own), ""},
		{"record another event on a pod", event("Started", own), eventRefusal},
		{"tell a pod its devices from another node", event(vnode.ReasonDevicesGiven, other), eventRefusal},
	} {
		err := c.do(ctx)
		switch {
		case c.refusal == "" && err != nil:
			t.Errorf("with the policy, the provider may not %s: %v", c.what, err)
		case c.refusal != "":
			if msg := mustForbid(t, "with the policy, the provider may "+c.what, err); !strings.Contains(msg, c.refusal) || !apierrors.IsForbidden(err) {
				t.Errorf("%s: refused with %q, want the policy's %q, 403 Forbidden", c.what, msg, c.refusal)
			}
		}
	}
}

// deviceRightsSymptoms are what breaks without each rule that publishing
// devices adds, by ruleKey, as rightsSymptoms are for the others. Each
// wait is for the API server's refusal of the request the rule allows.
var deviceRightsSymptoms = map[string]func(t *testing.T, c *rightsCase){
	"cluster resourceslices list,watch": func(t *testing.T, c *rightsCase) {
		// The node's slices' cache lists them.
		c.startRefused(t, http.MethodGet, "/apis/resource.k8s.io/v1/resourceslices", "the cache of *v1.ResourceSlice cannot sync")
	},
	"cluster resourceslices create,update,delete": func(t *testing.T, c *rightsCase) {
		// The controller's create is refused: counted, and no slice.
		c.run(t)
		c.plugin.reply(http.StatusOK, devicesReply(a100Devices(1)), 0)
		c.awaitRefused(t, http.MethodPost, "/apis/resource.k8s.io/v1/resourceslices")
		eventually(t, "the refusal counted", func(context.Context) (bool, string) {
			n, _ := gather(t, c.reg).value("pingnode_device_publish_errors_total", "node", c.name)
			return n >= 1, fmt.Sprintf("%g publish errors", n)
		})
		if p, err := readPool(t.Context(), c.cfg.DRADriver, c.name); err != nil || len(p.generations) > 0 {
			t.Errorf("the node's slices: %s (%v), want none", p, err)
		}
	},
	"cluster resourceclaims list,watch": func(t *testing.T, c *rightsCase) {
		// The claims' cache lists them.
		c.startRefused(t, http.MethodGet, "/apis/resource.k8s.io/v1/resourceclaims", "the cache of *v1.ResourceClaim cannot sync")
	},
	"cluster resourceclaims get": func(t *testing.T, c *rightsCase) {
		// A pod whose claim is not in the cache is refused only once the
		// claim as stored says so: never, here.
		c.run(t)
		claim := c.name + "-missing"
		pod := missingClaimPod(c.name+"-pod", c.name, claim)
		createPodObject(t, pod)
		c.awaitRefused(t, http.MethodGet, "/apis/resource.k8s.io/v1/namespaces/"+metav1.NamespaceDefault+"/resourceclaims/"+claim)
		if events := podEvents(t.Context(), t, pod.Name, vnode.ReasonClaimNotAllowed); len(events) > 0 {
			t.Errorf("the pod is refused without the claim as stored:%s", describe(events))
		}
	},
	"cluster events create,patch": func(t *testing.T, c *rightsCase) {
		// The node's first Ready is an event, in default.
		c.run(t)
		c.awaitRefused(t, http.MethodPost, "/api/v1/namespaces/"+metav1.NamespaceDefault+"/events")
		// The node lifecycle controller's own (RegisteredNode) may be there.
		if events := fromProvider(nodeEventsOf(t.Context(), t, c.name)); len(events) > 0 {
			t.Errorf("the provider's events on the node:%s", describe(events))
		}
	},
}

// TestDeviceRightsEachNeeded takes away, in turn, each rule that
// -dra-driver adds or changes (a provider of one node that counts what its
// pods hold and publishes devices), and shows what breaks. A rule with no
// symptom fails the test. The cases run in parallel.
func TestDeviceRightsEachNeeded(t *testing.T) {
	needsControlPlane(t)
	const driver = "rights.gpu.pingnode.example.com"
	all := accessFor(testNamespace, "rights", []vnode.Config{{Static: vnode.StaticNode("vk-rights"), CountHeld: true, DRADriver: driver}}, nil)
	plain := accessFor(testNamespace, "rights", []vnode.Config{{Static: vnode.StaticNode("vk-rights"), CountHeld: true}}, nil)
	before := map[string]bool{}
	for _, r := range plain.Roles() {
		for _, rule := range r.Rules {
			before[ruleKey(r.Namespace, rule.PolicyRule)] = true
		}
	}
	i := 0
	for _, r := range all.Roles() {
		for _, rule := range r.Rules {
			key := ruleKey(r.Namespace, rule.PolicyRule)
			if before[key] {
				continue // TestRightsEachNeeded shows it
			}
			symptom, ok := deviceRightsSymptoms[key]
			if !ok {
				t.Errorf("the rule %q (%s) has no symptom here: show what breaks without it, or take it away", key, rule.Why)
				continue
			}
			name := fmt.Sprintf("vk-dra-rights-%d", i)
			i++
			t.Run(key, func(t *testing.T) {
				t.Parallel()
				deleteSlicesAtEnd(t, driver, name)
				plugin := &fakePlugin{}
				plugin.reply(http.StatusOK, "ok", 0)
				plugin.server = httptest.NewServer(plugin)
				t.Cleanup(plugin.closeServer)
				c := &rightsCase{name: name, plugin: plugin, reg: prometheus.NewRegistry()}
				clearNodeEvents(t, name)
				c.cfg = testConfig(name, plugin.server.URL+"/status")
				c.cfg.CountHeld, c.cfg.DRADriver = true, driver
				c.cfg.Metrics = metrics.New(c.reg)
				a := accessFor(testNamespace, fmt.Sprintf("%s-%d", name, identities.Add(1)), []vnode.Config{c.cfg}, nil)
				c.id = grantObjects(t, a, without(t, a, key))
				c.client = c.log.clientFor(t, c.id)
				t.Logf("without %s (%s)", key, rule.Why)
				symptom(t, c)
			})
		}
	}
	if i == 0 {
		t.Error("-dra-driver adds no rule")
	}
}
