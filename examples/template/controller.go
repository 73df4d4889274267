package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// holdFigures is how long a change of figures alone (a backend's free
// cpus, say) is held back: the kubelet's nodeStatusUpdateFrequency. Many
// such changes in between are one write; a taint, a label or a condition
// goes at once.
const holdFigures = 10 * time.Second

// options are the library's, the same at every ping: its defaults (the
// grace of 50 s before Ready turns False, interLink's connectivity
// condition), and a condition's heartbeat refreshed every 5 minutes, the
// kubelet's nodeStatusReportFrequency, since no Virtual Kubelet node
// controller does it here.
var options = nodeapply.Options{HeartbeatInterval: 5 * time.Minute}

// controller keeps one node true to its plugin's pings.
type controller struct {
	nodes corev1client.NodeInterface
	name  string
	ping  func(context.Context) nodeapply.Ping // the plugin's client; its At is the clock
	opts  nodeapply.Options
	log   *slog.Logger

	heldSince time.Time // the ping that first held back a change of figures alone; zero when none is
	warnings  string    // the last warnings logged, to log them again only when they change
}

func newController(nodes corev1client.NodeInterface, name string, ping func(context.Context) nodeapply.Ping, log *slog.Logger) *controller {
	return &controller{nodes: nodes, name: name, ping: ping, opts: options, log: log}
}

// sync pings the plugin once and brings the node to what the ping says:
// it reads the node, applies the ping, and sends what changed, if
// anything. The node is registered if it does not exist. A write refused
// because the node changed since it was read (409 Conflict: an
// administrator's kubectl taint, say), or a registration refused because
// the node exists after all, reads the node again and applies the ping
// again, with backoff. Any other error is returned, and the next
// ping tries again on the node as it then is.
func (c *controller) sync(ctx context.Context) error {
	// The reply read once, through the library's one gate, whatever retries below.
	ping, replyWarnings := nodeapply.Judge(c.ping(ctx), c.opts.Reply)
	get := metav1.GetOptions{ResourceVersion: "0"} // first from the API server's cache, as the kubelet reads its node
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	return retry.OnError(retry.DefaultBackoff, retriable, func() error {
		node, err := c.nodes.Get(ctx, c.name, get)
		get = metav1.GetOptions{} // after a conflict, as stored
		registered := err == nil
		switch {
		case apierrors.IsNotFound(err):
			node = registration(c.name)
		case err != nil:
			return err
		}
		res := nodeapply.Apply(node, ping, c.opts)
		c.logWarnings(slices.Concat(replyWarnings, res.Warnings))
		if !registered {
			return c.register(ctx, res)
		}
		return c.write(ctx, res, ping.At)
	})
}

// registration is the node as it is registered, before the first ping is
// applied to it: its name, the labels of a Virtual Kubelet's node
// (type=virtual-kubelet, and kubernetes.io/hostname) and its taint
// (interLink's virtual-node.interlink/no-schedule, nodeapply's
// DefaultProtectedKey, which keeps away every pod that does not tolerate
// it, and which Apply never touches), and nothing else: the ping
// gives it its capacity and its conditions.
func registration(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"type": "virtual-kubelet", corev1.LabelHostname: name}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: nodeapply.DefaultProtectedKey, Value: "pingnode", Effect: corev1.TaintEffectNoSchedule},
		}},
	}
}

// register creates the node as the first ping left it.
func (c *controller) register(ctx context.Context, res nodeapply.Result) error {
	if _, err := c.nodes.Create(ctx, res.Node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("registering the node: %w", err)
	}
	c.log.Info("node registered", "node", c.name, "changes", len(res.Changes))
	c.logChanges(res.Changes)
	return nil
}

// write sends what the ping changed: the object patch (taints, labels and
// their ownership annotations, with the resourceVersion read as a
// precondition) to the node, and the status patch to its status. Each is
// sent even if the other is refused. A change of figures alone waits up
// to holdFigures (see hold).
func (c *controller) write(ctx context.Context, res nodeapply.Result, at time.Time) error {
	switch {
	case len(res.Changes) == 0:
		c.heldSince = time.Time{} // a held change that went back is no change
		return nil
	case res.FiguresOnly() && c.hold(at):
		return nil
	}
	var errs []error
	if patch := res.ObjectPatch(); patch != nil {
		if _, err := c.nodes.Patch(ctx, c.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("the node's taints and labels: %w", err))
		}
	}
	if patch := res.StatusPatch(); patch != nil {
		if _, err := c.nodes.Patch(ctx, c.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			errs = append(errs, fmt.Errorf("the node's status: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err // a conflict among them: sync reads the node again
	}
	c.heldSince = time.Time{}
	c.logChanges(res.Changes)
	return nil
}

// hold reports whether a change of figures alone, found by the ping made
// at at, is still held back: until holdFigures after the first ping that
// found one.
func (c *controller) hold(at time.Time) bool {
	if c.heldSince.IsZero() {
		c.heldSince = at
	}
	return at.Sub(c.heldSince) < holdFigures
}

// logChanges logs what was written, once it was.
func (c *controller) logChanges(changes []nodeapply.Change) {
	for _, change := range changes {
		c.log.Info("node changed", "node", c.name, "change", change.String())
	}
}

// logWarnings logs the warnings of a ping when they differ from the last
// ones logged: a plugin that sends the same mistake at every ping is
// told of it once.
func (c *controller) logWarnings(warnings []pingstatus.Warning) {
	text := fmt.Sprint(warnings)
	if text == c.warnings {
		return
	}
	c.warnings = text
	for _, w := range warnings {
		c.log.Warn("the plugin's reply", "node", c.name, "warning", w.String())
	}
}
