package devices

import (
	"context"
	"log/slog"
	"sync"

	"github.com/go-logr/logr"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
)

// Publisher runs the ResourceSlice controller of one node.
type Publisher struct {
	driver, node string
	client       kubernetes.Interface
	log          *slog.Logger
	metrics      metrics.Node

	mu sync.Mutex
	// owner is the UID of the node the running controller's slices
	// belong to; a node registered again is another owner, and gets a
	// controller of its own.
	owner types.UID
	ctrl  *resourceslice.Controller // nil while it starts
	stop  context.CancelFunc        // ends the controller; nil when none runs
	done  chan struct{}             // closed once the controller has stopped
	want  *resourceslice.DriverResources
	// said is the last error of the controller that was logged: an error
	// is logged when it begins or changes, not at every retry.
	said string
}

// NewPublisher returns the publisher of the pool of node, of driver,
// which writes through client and counts its errors in m; no controller
// runs until the first pool is handed on ([Publisher.Publish]).
func NewPublisher(driver, node string, client kubernetes.Interface, log *slog.Logger, m metrics.Node) *Publisher {
	return &Publisher{driver: driver, node: node, client: client, log: log, metrics: m}
}

// Publish hands pool on, to be published as the pool of the node whose
// UID is owner: to the controller, started with it if none runs for that
// node. It does not wait for the controller to start (its informer must
// sync first) nor for the slices to be written.
func (p *Publisher) Publish(ctx context.Context, owner types.UID, pool []devicepool.Device) {
	want := DriverResources(p.node, dra.Devices(pool))
	p.mu.Lock()
	p.want, p.said = want, "" // a new pool: its errors are news
	if p.stop != nil && p.owner == owner {
		if p.ctrl != nil { // else the start hands want on
			p.ctrl.Update(want)
		}
		p.mu.Unlock()
		return
	}
	stop, done := p.stop, p.done
	p.stop = nil
	p.mu.Unlock()
	if stop != nil { // of a node since deleted: its slices go with it
		stop()
		<-done
	}
	p.start(ctx, owner, want)
}

// start starts a controller for the node of this UID, with want.
func (p *Publisher) start(parent context.Context, owner types.UID, want *resourceslice.DriverResources) {
	ctx, stop := context.WithCancel(klog.NewContext(parent, logr.FromSlogHandler(p.log.Handler())))
	done := make(chan struct{})
	p.mu.Lock()
	p.owner, p.ctrl, p.stop, p.done = owner, nil, stop, done
	p.mu.Unlock()
	go func() {
		defer close(done)
		ctrl, err := resourceslice.StartController(ctx, resourceslice.Options{
			DriverName: p.driver,
			KubeClient: p.client,
			// The UID given, the controller reads no node.
			Owner:        &resourceslice.Owner{APIVersion: "v1", Kind: "Node", Name: p.node, UID: owner},
			Resources:    want,
			ErrorHandler: p.failed,
		})
		if err != nil {
			return // only when ctx ended: its informer waits to sync until then
		}
		p.mu.Lock()
		if p.done == done { // still the node's controller
			p.ctrl = ctrl
			if p.want != want { // handed on while it started
				ctrl.Update(p.want)
			}
		}
		p.mu.Unlock()
		<-ctx.Done()
		ctrl.Stop()
	}()
}

// failed is the controller's ErrorHandler: it counts each error, and logs
// it when it begins or changes. The controller retries after it returns.
func (p *Publisher) failed(_ context.Context, err error, msg string) {
	p.metrics.DevicePublishError()
	text := msg + ": " + err.Error()
	p.mu.Lock()
	said := p.said == text
	p.said = text
	p.mu.Unlock()
	if !said {
		p.log.Error("the node's devices are not published as they should be; the ResourceSlice controller tries again", "what", msg, "error", err)
	}
}

// OwnedBy reports whether a controller runs for the node whose UID is
// owner.
func (p *Publisher) OwnedBy(owner types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stop != nil && p.owner == owner
}

// Close stops the controller, if one runs, and waits until it has.
func (p *Publisher) Close() {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.stop, p.ctrl = nil, nil
	p.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// DriverResources is the controller's view of one pool named pool with
// devices: slices of as many devices as the API server takes in one
// (sliceLimit: 128, or 64 in a pool with a tainted device), in the pool's
// order (the controller wants each slice valid), and one slice, empty,
// for a pool with no device, which says that the driver runs and has
// none.
func DriverResources(pool string, devices []resourcev1.Device) *resourceslice.DriverResources {
	limit := sliceLimit(devices)
	var slices []resourceslice.Slice
	for {
		n := min(len(devices), limit)
		slices = append(slices, resourceslice.Slice{Devices: devices[:n:n]})
		devices = devices[n:]
		if len(devices) == 0 {
			break
		}
	}
	return &resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{pool: {Slices: slices}}}
}

// sliceLimit is how many of devices a slice may hold: the API server
// takes at most [resourcev1.ResourceSliceMaxDevices] (128) in a slice, and
// at most [resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures] (64) in
// a slice with a tainted device (k8s.io/kubernetes's validation of a
// slice). A pool with any tainted device is split at 64 throughout: the
// first taint, or the last one gone, moves where the slices end, and the
// controller writes the pool again, in a new generation, as for any
// change of more than one slice.
func sliceLimit(devices []resourcev1.Device) int {
	for _, d := range devices {
		if len(d.Taints) > 0 {
			return resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
		}
	}
	return resourcev1.ResourceSliceMaxDevices
}
