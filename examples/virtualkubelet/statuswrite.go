package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
)

// The node controller's status writes: the client it writes through,
// which keeps its hands off the labels and annotations (statusWatch),
// what each write stored (delivered), and what the provider does when one
// is refused (statusRefused).

// statusWatch is the node client the node controller writes through. The
// controller reads the node before each status patch (virtual-kubelet
// v1.14.1's updateNodeStatus, and its three-way patch needs it);
// statusWatch keeps that read, and calls delivered with the node as
// stored before and after each status patch the API server took, and
// with the node the controller registered (before is then nil, as when
// the read is missing or of a node since deleted).
//
// It also keeps the controller's hands off the labels and annotations.
// The controller patches them with the status, by a three-way merge
// against its record of what it applied (the annotation
// virtual-kubelet.io/last-applied-object-meta) and with no
// resourceVersion precondition: a label on the node it was handed is
// added, one it applied before and no longer sees is removed. The node it
// writes may be older than the node as stored: it was handed on before an
// administrator removed a label, or before the object patch removed one
// of the plugin's, and waited while the controller was busy; it would
// then put the removed label back. So statusWatch sends the controller's
// status patch without its labels and without any annotation but the
// controller's own records: the labels and annotations are written by the
// object patch, with a precondition, and by others, never by the
// controller once the node is registered.
type statusWatch struct {
	corev1client.NodeInterface
	delivered func(before, after *corev1.Node)
	// beforeRead runs before each read of the node by the controller.
	beforeRead *hook
	// absent says that the provider has just read the node and found
	// none: the controller's first read, by which it decides to register
	// the node, is answered NotFound without asking the API server again.
	// Should another register the node meanwhile, the controller's create
	// fails (AlreadyExists), and the run starts again.
	absent atomic.Bool
	// created is the node the controller registered, until registered
	// takes it.
	created atomic.Pointer[corev1.Node]

	mu     sync.Mutex
	before *corev1.Node
}

func (w *statusWatch) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error) {
	if w.beforeRead != nil {
		w.beforeRead.run(ctx)
	}
	if w.absent.Swap(false) {
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	node, err := w.NodeInterface.Get(ctx, name, opts)
	if err == nil {
		w.mu.Lock()
		w.before = node
		w.mu.Unlock()
	}
	return node, err
}

func (w *statusWatch) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Node, error) {
	status := slices.Equal(subresources, []string{"status"})
	if status {
		var err error
		if data, err = statusOnly(data); err != nil {
			return nil, err
		}
	}
	node, err := w.NodeInterface.Patch(ctx, name, pt, data, opts, subresources...)
	if err == nil && status {
		w.mu.Lock()
		before := w.before
		w.before = nil
		w.mu.Unlock()
		if before != nil && before.UID != node.UID {
			before = nil // another node of the same name: no transition
		}
		w.delivered(before, node)
	}
	return node, err
}

// controllerAnnotations is the prefix of the annotations in which the
// node controller records what it applied.
const controllerAnnotations = "virtual-kubelet.io/"

// statusOnly returns the node controller's status patch without its
// labels and without the annotations that are not the controller's own
// records (see [statusWatch]).
func statusOnly(patch []byte) ([]byte, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, fmt.Errorf("the node controller's status patch: %w", err)
	}
	raw, ok := p["metadata"]
	if !ok {
		return patch, nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("the node controller's status patch: %w", err)
	}
	delete(meta, "labels")
	if raw, ok := meta["annotations"]; ok {
		var annotations map[string]json.RawMessage
		if err := json.Unmarshal(raw, &annotations); err != nil {
			return nil, fmt.Errorf("the node controller's status patch: %w", err)
		}
		maps.DeleteFunc(annotations, func(k string, _ json.RawMessage) bool { return !strings.HasPrefix(k, controllerAnnotations) })
		meta["annotations"] = mustJSON(annotations)
		if len(annotations) == 0 {
			delete(meta, "annotations")
		}
	}
	p["metadata"] = mustJSON(meta)
	if len(meta) == 0 {
		delete(p, "metadata")
	}
	return json.Marshal(p)
}

// mustJSON is v, a map of raw JSON values, as JSON.
func mustJSON(v map[string]json.RawMessage) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // raw values that were unmarshaled marshal again
	}
	return b
}

func (w *statusWatch) Create(ctx context.Context, node *corev1.Node, opts metav1.CreateOptions) (*corev1.Node, error) {
	created, err := w.NodeInterface.Create(ctx, node, opts)
	if err == nil {
		w.created.Store(created)
		w.delivered(nil, created)
	}
	return created, err
}

// registered returns the node the controller registered, once; nil if it
// registered none (the node was stored already).
func (w *statusWatch) registered() *corev1.Node {
	return w.created.Swap(nil)
}

// delivered records what a status write of the node controller stored:
// the allocatable resources the node advertises, and the transitions of
// its conditions, in the log, as events and in the metrics. It runs in
// the node controller's goroutine.
func (p *Provider) delivered(before, after *corev1.Node) {
	p.advertised = p.metrics.Advertise(p.advertised, after.Status.Allocatable)
	if before == nil {
		return // registered: the first ping sets the conditions
	}
	connectivity := p.opts.connectivity()
	p.events.transitions(before, after, connectivity)
	p.metrics.Transition(conditionNamed(before, connectivity), transitioned(before, after, connectivity))
	for i := range after.Status.Conditions {
		t := after.Status.Conditions[i].Type
		now := transitioned(before, after, t)
		if now == nil {
			continue
		}
		from := corev1.ConditionStatus("")
		if was := conditionNamed(before, t); was != nil {
			from = was.Status
		}
		level := slog.LevelInfo
		if (t == corev1.NodeReady || t == connectivity) && now.Status != corev1.ConditionTrue {
			level = slog.LevelWarn
		}
		p.log.Log(context.Background(), level, "node condition transition", "condition", t, "from", from, "to", now.Status, "reason", now.Reason)
	}
}

// statusRefused is the node controller's status error handler. The next
// ping applies to the node as cached again, so that what was not stored
// is handed on again; a node that is gone is registered again by the
// next ping (registerAgain), not here.
func (p *Provider) statusRefused(_ context.Context, err error) error {
	p.stale.Store(true)
	if apierrors.IsNotFound(err) {
		p.log.Warn("the node is gone; the next ping registers it again")
		return err
	}
	p.count.writeErrors.Add(1)
	p.metrics.WriteError(metrics.KindStatus)
	p.log.Error("node status refused; the next ping hands it on again", "error", err)
	return err
}
