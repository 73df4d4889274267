package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Labels from the plugin, end to end: the real scheduler places pods by
// them, an administrator's labels survive every reply, labels the
// provider does not allow change nothing, the Virtual Kubelet node
// controller never undoes a label removed behind it, and the admission
// policy of -print-node-policy fences the provider's own token.

const (
	gpuProduct = "nvidia.com/gpu.product"
	gpuCount   = "nvidia.com/gpu.count"
	a100       = "NVIDIA-A100-SXM4-80GB"
	v100       = "Tesla-V100-SXM2-32GB"
	h100       = "NVIDIA-H100-80GB-HBM3"
	ownerLabel = "site.example.com/owner"
	rackLabel  = "site.example.com/rack"
	// unschedulableBySelector is what the scheduler says of a pod whose
	// node selector no node matches.
	unschedulableBySelector = "didn't match Pod's node affinity/selector"
)

// withNvidia lets the plugin set labels in nvidia.com, as -label-namespaces
// nvidia.com does.
func withNvidia(c *vnode.Config) { c.LabelNamespaces = []string{"nvidia.com"} }

// labelReply is a reply with resources and the labels given, as JSON.
func labelReply(labels map[string]string) string {
	b, err := json.Marshal(map[string]any{"resources": map[string]string{"cpu": "64", "memory": "256Gi"}, "labels": labels})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// hasLabels reports whether the node has each label of want (a value of
// "" means the label must be absent), and says which differs.
func hasLabels(node *corev1.Node, want map[string]string) (bool, string) {
	for k, v := range want {
		got, ok := node.Labels[k]
		switch {
		case v == "" && ok:
			return false, fmt.Sprintf("%s=%s, want it absent (labels %v)", k, got, node.Labels)
		case v != "" && got != v:
			return false, fmt.Sprintf("%s=%q, want %q (labels %v)", k, got, v, node.Labels)
		}
	}
	return true, ""
}

// labelsAre waits until the stored node has the labels of want.
func labelsAre(t *testing.T, name, what string, want map[string]string) {
	t.Helper()
	eventually(t, what, func(ctx context.Context) (bool, string) { return hasLabels(stored(ctx, t, name), want) })
}

// labelPatch is a patch that sets the label key to value, or removes it
// when value is "".
func labelPatch(t *testing.T, key, value string) []byte {
	t.Helper()
	v := any(value)
	if value == "" {
		v = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
	if err != nil {
		t.Fatal(err)
	}
	return patch
}

// setAdminLabel is kubectl label by an administrator, with the admin
// client: value "" removes the label. It retries on a conflict, as
// kubectl does.
func setAdminLabel(t *testing.T, name, key, value string) {
	t.Helper()
	if _, err := client.CoreV1().Nodes().Patch(t.Context(), name, types.MergePatchType, labelPatch(t, key, value), metav1.PatchOptions{}); err != nil {
		t.Fatalf("kubectl label %s %s=%s: %v", name, key, value, err)
	}
}

// createSelectingPod creates a pod that selects nodes by selector,
// tolerating the provider's protected and static taints, and deletes it
// when the test ends.
func createSelectingPod(t *testing.T, name string, selector map[string]string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			NodeSelector: selector,
			Tolerations:  providerTolerations(),
			Containers: []corev1.Container{{Name: "job", Image: "example.com/job", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	deletePod(t, name) // left by a run that was killed
	eventually(t, "no pod "+name+" left", func(ctx context.Context) (bool, string) {
		_, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), errorText(err)
	})
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("pod %s: %v", name, err)
	}
	t.Cleanup(func() { deletePod(t, name) })
}

// TestLabelsScheduler: two virtual nodes whose plugins report different
// GPU products; a pod that selects one product lands on that node only.
// Once the first plugin reports another product, a new pod that selects
// the old one stays Pending, by the scheduler's own decision.
func TestLabelsScheduler(t *testing.T) {
	needsControlPlane(t)
	const first, second = "vk-labels-a100", "vk-labels-v100"
	pa, pluginA := startProvider(t, first, time.Hour, withNvidia)
	pb, pluginB := startProvider(t, second, time.Hour, withNvidia)
	pluginA.reply(http.StatusOK, labelReply(map[string]string{gpuProduct: a100}), 0)
	pluginB.reply(http.StatusOK, labelReply(map[string]string{gpuProduct: v100}), 0)
	labelsAre(t, first, "the first node's product is stored", map[string]string{gpuProduct: a100})
	labelsAre(t, second, "the second node's product is stored", map[string]string{gpuProduct: v100})
	schedulable(t, first)
	schedulable(t, second)

	createSelectingPod(t, "wants-a100", map[string]string{gpuProduct: a100})
	boundTo(t, "wants-a100", first)

	pluginA.reply(http.StatusOK, labelReply(map[string]string{gpuProduct: h100}), 0)
	labelsAre(t, first, "the first node's new product is stored", map[string]string{gpuProduct: h100})
	createSelectingPod(t, "wants-a100-again", map[string]string{gpuProduct: a100})
	why := pending(t, "wants-a100-again")
	if !strings.Contains(why, unschedulableBySelector) {
		t.Errorf("the scheduler says %q, want it to say the pod %s", why, unschedulableBySelector)
	}
	t.Logf("A100 no longer reported: %s", why)
	createSelectingPod(t, "wants-h100", map[string]string{gpuProduct: h100})
	boundTo(t, "wants-h100", first)

	// Nothing lost: each node has its own product, and the provider's
	// writes were all taken.
	labelsAre(t, second, "the second node keeps its product", map[string]string{gpuProduct: v100})
	noWriteErrors(t, pa)
	noWriteErrors(t, pb)
}

// TestLabelsBesideAdmin: an administrator's label survives every reply,
// labels: {} among them, which removes only the plugin's labels. A reply
// with a label in node-restriction.kubernetes.io or kubernetes.io (the
// static kubernetes.io/hostname among them) changes nothing on the node,
// and says why: a Warning event LabelRefused on the node, and
// pingnode_warnings_total{subject="label",action="refused"}.
func TestLabelsBesideAdmin(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-labels-admin"
	clearNodeEvents(t, name)
	reg := prometheus.NewRegistry()
	p, plugin := startProvider(t, name, time.Hour, withNvidia, func(c *vnode.Config) { c.Metrics = metrics.New(reg) })
	static := maps.Clone(vnode.StaticNode(name).Labels)

	plugin.reply(http.StatusOK, labelReply(map[string]string{gpuProduct: a100, gpuCount: "8"}), 0)
	labelsAre(t, name, "the plugin's labels are stored", map[string]string{gpuProduct: a100, gpuCount: "8"})
	setAdminLabel(t, name, ownerLabel, "team-a")

	replies := []struct {
		name   string
		labels map[string]string
		want   map[string]string // of the plugin's labels
	}{
		{"a new product", map[string]string{gpuProduct: h100, gpuCount: "8"}, map[string]string{gpuProduct: h100, gpuCount: "8"}},
		{"one label fewer", map[string]string{gpuProduct: h100}, map[string]string{gpuProduct: h100, gpuCount: ""}},
		{"the administrator's key", map[string]string{gpuProduct: h100, ownerLabel: "plugin"}, map[string]string{gpuProduct: h100}},
		{"labels: {}", map[string]string{}, map[string]string{gpuProduct: "", gpuCount: ""}},
		{"back again", map[string]string{gpuProduct: a100}, map[string]string{gpuProduct: a100}},
	}
	for _, r := range replies {
		plugin.reply(http.StatusOK, labelReply(r.labels), 0)
		want := maps.Clone(r.want)
		want[ownerLabel] = "team-a"
		maps.Copy(want, static)
		labelsAre(t, name, r.name+": the plugin's labels as sent, the administrator's and the static ones kept", want)
		pings := p.Count.Pings.Load()
		eventually(t, r.name+": three more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+3, "pings" })
		if ok, why := hasLabels(stored(t.Context(), t, name), want); !ok {
			t.Errorf("%s, three pings later: %s", r.name, why)
		}
	}

	// Labels no provider may let a plugin set: nothing changes.
	before := stored(t.Context(), t, name)
	refused := func() float64 {
		n, _ := gather(t, reg).value("pingnode_warnings_total", "node", name, "subject", "label", "action", "refused")
		return n
	}
	counted := refused()
	plugin.reply(http.StatusOK, labelReply(map[string]string{
		gpuProduct: a100,
		"node-restriction.kubernetes.io/dedicated": "x",
		"kubernetes.io/hostname":                   "other",
		"example.org/x":                            "y",
	}), 0)
	reason := vnode.WarningReason(pingstatus.Warning{Subject: pingstatus.SubjectLabel, Action: pingstatus.Refused})
	eventually(t, "the refusals are said in events", func(ctx context.Context) (bool, string) {
		events := eventsWith(nodeEventsOf(ctx, t, name), reason)
		var paths []string
		for _, e := range events {
			paths = append(paths, e.Message)
		}
		all := strings.Join(paths, "\n")
		return strings.Contains(all, "node-restriction.kubernetes.io/dedicated") && strings.Contains(all, "kubernetes.io/hostname") &&
			strings.Contains(all, "example.org/x"), describe(events)
	})
	pings := p.Count.Pings.Load()
	eventually(t, "five more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+5, "pings" })
	after := stored(t.Context(), t, name)
	if !maps.Equal(after.Labels, before.Labels) {
		t.Errorf("labels went from %v to %v, want them unchanged", before.Labels, after.Labels)
	}
	if got := after.Annotations[nodeapply.DefaultLabelOwnershipAnnotation]; got != gpuProduct {
		t.Errorf("the plugin owns %q, want only %s", got, gpuProduct)
	}
	if n := refused() - counted; n < 3 {
		t.Errorf("pingnode_warnings_total{subject=label,action=refused} grew by %g, want the three refused labels counted", n)
	}
	noWriteErrors(t, p)
}

// TestLabelsStatusRace: a status patch computed from a node with an
// administrator's label, and sent after the administrator removed it (a
// hook holds the patch until then; in a cluster, a slow write does the
// same), does not put the label back, nor does it touch the plugin's: the
// status patch names no label. (The Virtual Kubelet node controller,
// which wrote the status before, merged the labels of the node it held.)
func TestLabelsStatusRace(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-labels-race"
	p, plugin := startProvider(t, name, time.Hour, withNvidia)
	labels := map[string]string{gpuProduct: a100, gpuCount: "8"}
	reply := func(cpu int) string {
		b, err := json.Marshal(map[string]any{"resources": map[string]string{"cpu": strconv.Itoa(cpu)}, "labels": labels})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	plugin.reply(http.StatusOK, reply(64), 0)
	labelsAre(t, name, "the plugin's labels are stored", labels)
	setAdminLabel(t, name, rackLabel, "r1")

	// Hold the status patches, until one is computed from a node with the
	// rack label.
	var hold atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	p.BeforeStatusPatch.Set(func(ctx context.Context) {
		if !hold.Load() {
			return
		}
		select {
		case held <- struct{}{}:
		case <-ctx.Done():
			return
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	hold.Store(true)
	cpu := 63
	for ; ; cpu-- {
		plugin.reply(http.StatusOK, reply(cpu), 0)
		select {
		case <-held:
		case <-time.After(defaultWait):
			t.Fatalf("no status patch for cpu %d", cpu)
		}
		if p.LastSent().Labels[rackLabel] == "r1" {
			break
		}
		release <- struct{}{} // computed before the provider's cache had the label
	}
	setAdminLabel(t, name, rackLabel, "")
	hold.Store(false)
	release <- struct{}{}
	eventually(t, "the status patch held is stored", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), map[string]string{"cpu": strconv.Itoa(cpu)})
	})
	want := map[string]string{gpuProduct: a100, gpuCount: "8", rackLabel: ""}
	if ok, why := hasLabels(stored(t.Context(), t, name), want); !ok {
		t.Errorf("after the status patch: %s", why)
	}
	pings := p.Count.Pings.Load()
	eventually(t, "five more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+5, "pings" })
	if ok, why := hasLabels(stored(t.Context(), t, name), want); !ok {
		t.Errorf("five pings later: %s", why)
	}
	noWriteErrors(t, p)
}

// TestLabelFence: with the provider's own token and the admission policy
// of -print-node-policy in force, the API server takes a change of its
// node's labels in an allowed namespace (node-feature-discovery's,
// -label-namespaces nvidia.com, and their subdomains), by the object and
// by the status, and refuses (403 Forbidden, by the policy) one outside:
// kubernetes.io/hostname=other, node-restriction.kubernetes.io, a
// namespace not allowed, a registration with such a label. Its static
// labels it may set to their static values.
func TestLabelFence(t *testing.T) {
	needsControlPlane(t)
	const own = "vk-label-fence"
	ctx := t.Context()
	cfg := testConfig(own, "http://127.0.0.1:1/status")
	withNvidia(&cfg)
	id := grant(t, own, accessFor("", "", []vnode.Config{cfg}, nil))
	sa := id.client
	t.Cleanup(func() { deleteNode(t, own) })
	policy := id.access.Policy()
	installPolicy(ctx, t, policy)
	const refusal = "may change its nodes' labels only in"
	register := func(ctx context.Context, labels map[string]string, dryRun bool) error {
		n := vnode.StaticNode(own)
		maps.Copy(n.Labels, labels)
		opts := metav1.CreateOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err := sa.CoreV1().Nodes().Create(ctx, n, opts)
		return err
	}
	eventually(t, "the policy is in force", func(ctx context.Context) (bool, string) {
		err := register(ctx, map[string]string{"example.org/x": "y"}, true)
		return err != nil && strings.Contains(err.Error(), refusal), errorText(err)
	})
	if err := register(ctx, nil, false); err != nil {
		t.Fatalf("the provider registers its node with its static labels: %v", err)
	}
	label := func(key, value string, subresources ...string) func(context.Context) error {
		return func(ctx context.Context) error {
			v := any(value)
			if value == "" {
				v = nil
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
			if err != nil {
				return err
			}
			_, err = sa.CoreV1().Nodes().Patch(ctx, own, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, subresources...)
			return err
		}
	}
	for _, c := range []struct {
		what    string
		do      func(context.Context) error
		allowed bool
	}{
		{"set nvidia.com/gpu.product", label(gpuProduct, a100), true},
		{"change nvidia.com/gpu.product", label(gpuProduct, h100), true},
		{"set a label of a subdomain of nvidia.com", label("gpu.nvidia.com/mig", "true"), true},
		{"set a node-feature-discovery label", label("feature.node.kubernetes.io/cpu-model.vendor_id", "AMD"), true},
		{"set a profile.node.kubernetes.io label by the status", label("profile.node.kubernetes.io/hpc", "true", "status"), true},
		{"remove nvidia.com/gpu.product", label(gpuProduct, ""), true},
		{"set its static hostname label to its own value", label("kubernetes.io/hostname", own), true},
		{"set kubernetes.io/hostname=other", label("kubernetes.io/hostname", "other"), false},
		{"set kubernetes.io/hostname=other by the status", label("kubernetes.io/hostname", "other", "status"), false},
		{"remove its static label kubernetes.io/hostname", label("kubernetes.io/hostname", ""), false},
		{"set node-restriction.kubernetes.io/dedicated=x", label("node-restriction.kubernetes.io/dedicated", "x"), false},
		{"set node-role.kubernetes.io/control-plane=true", label("node-role.kubernetes.io/control-plane", "true"), false},
		{"set example.org/x", label("example.org/x", "y"), false},
		{"set a label of a lookalike of nvidia.com", label("notnvidia.com/gpu.product", a100), false},
		{"set an unprefixed label", label("dedicated", "gpu"), false},
	} {
		err := c.do(ctx)
		switch {
		case c.allowed && err != nil:
			t.Errorf("with the policy, the provider may not %s: %v", c.what, err)
		case !c.allowed:
			if msg := mustForbid(t, "with the policy, the provider may "+c.what, err); !strings.Contains(msg, refusal) {
				t.Errorf("%s: refused with %q, want the policy's %q", c.what, msg, refusal)
			}
		}
	}
	// An administrator's label beside: the provider's writes of other
	// labels go through, and the administrator's own are theirs.
	setAdminLabel(t, own, ownerLabel, "team-a")
	if err := label(gpuProduct, a100)(ctx); err != nil {
		t.Errorf("beside an administrator's label, the provider may not set its own: %v", err)
	}
	mustForbid(t, "the provider may change the administrator's label", label(ownerLabel, "team-b")(ctx))
	mustForbid(t, "the provider may remove the administrator's label", label(ownerLabel, "")(ctx))
	status := []byte(`{"status":{"capacity":{"cpu":"8"}}}`)
	if _, err := sa.CoreV1().Nodes().Patch(ctx, own, types.StrategicMergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		t.Errorf("the provider's status patch with no label: %v", err)
	}
	want := map[string]string{ownerLabel: "team-a", gpuProduct: a100, "kubernetes.io/hostname": own, "node-restriction.kubernetes.io/dedicated": "", "example.org/x": ""}
	if ok, why := hasLabels(stored(ctx, t, own), want); !ok {
		t.Errorf("after the refusals: %s", why)
	}
}
