package vnode

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/devices"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
	"github.com/pingnode/pingnode/pingstatus"
)

// Devices, with a DRA driver (-dra-driver): the plugin's devices are
// published as Dynamic Resource Allocation devices, the node's pool of
// its driver, named after the node. At each ping:
//
//  1. The pool as published is read from the caches, with nodeapply/dra's
//     Pool: the node's ResourceSlices of the driver, and the claims whose
//     allocations name a device of the pool (by the claim cache's index),
//     which it marks held.
//  2. devicepool.Apply of that pool and the ping, beside nodeapply.Apply
//     of the node and the same ping, gives the pool the reply asks for
//     (Result.Devices) and what changed (Result.Changes).
//  3. The pool is handed to the node's ResourceSlice controller
//     (internal/devices): started at the first reply that carries
//     devices, with that pool; then handed on only when the pool changed.
//     A steady ping hands nothing on, and the controller writes nothing.
//  4. The pods bound to the node are told which devices they were given
//     (poddevices.go).
//
// Without a driver, the pool's step is not run and a reply's devices are
// passed over: their warnings are dropped too, and the log says once that
// they are ignored.
//
// The slices' cache lags the controller's writes: until it shows the
// last pool handed on, a ping reads the pool before it, and the step finds
// the same change again. The pool Apply gives depends only on the reply
// and on which devices claims hold, not on the free devices published, so
// it is the pool handed on already, and is not handed on twice.

// deviceState is what a run of the provider keeps of its node's devices.
// Only the ping loop touches it.
type deviceState struct {
	driver, pool string
	pub          *devices.Publisher
	// handed is the pool last handed to the controller: a ping whose
	// Result.Devices is the same (the slices' cache has not caught up
	// with it yet) hands nothing on again.
	handed  []devicepool.Device
	started bool // a controller was handed a pool in this run
	told    podsTold
}

// startDevices sets up what a run needs of the node's devices, and
// returns what stops it.
func (p *Node) startDevices() (stop func()) {
	if p.cfg.DRADriver == "" {
		p.devices = nil
		return func() {}
	}
	name := p.cfg.Static.Name
	p.metrics.DevicesInUse()
	p.devices = &deviceState{
		driver: p.cfg.DRADriver, pool: name,
		pub:  devices.NewPublisher(p.cfg.DRADriver, name, p.client, p.log, p.metrics),
		told: podsTold{},
	}
	return p.devices.pub.Close
}

// devicePool is the pool's step of the ping: the pool as published, read
// from the caches, and what the ping makes of it. Without a driver it is
// the zero Result: nothing to publish.
func (p *Node) devicePool(ping nodeapply.Ping) devicepool.Result {
	d := p.devices
	if d == nil {
		return devicepool.Result{}
	}
	published := dra.Pool(p.caches.NodeSlices(), p.caches.Claims.InPool(d.driver, d.pool), p.caches.BoundPods(), ping.At, d.driver, d.pool)
	return devicepool.Apply(published, ping, p.opts.Apply.Reply)
}

// withoutDevices returns the parse warnings of the ping's reply, less
// those about devices when the provider publishes none (no driver): the
// reply's devices are passed over, and the log says once that they are
// ignored.
func (p *Node) withoutDevices(ping nodeapply.Ping, warnings []pingstatus.Warning) []pingstatus.Warning {
	if p.devices != nil {
		return warnings
	}
	aboutDevices := func(w pingstatus.Warning) bool { return w.Subject == pingstatus.SubjectDevice }
	if ping.Reply == nil || !ping.Reply.ReplaceDevices && !slices.ContainsFunc(warnings, aboutDevices) {
		return warnings // the common case: no news of devices, nothing copied
	}
	if !p.devicesIgnored {
		p.devicesIgnored = true
		p.log.Warn("the plugin's reply lists devices, which only -dra-driver publishes; they are ignored (said once)")
	}
	return slices.DeleteFunc(slices.Clone(warnings), aboutDevices)
}

// publishDevices hands the pool of res, the pool's step of ping, on to be
// published, if it is news: the first pool of a reply with devices in
// this run (which starts the controller), a pool that changed, or any
// pool once node was registered again (a new owner).
func (p *Node) publishDevices(ctx context.Context, node *corev1.Node, ping nodeapply.Ping, res devicepool.Result) {
	d := p.devices
	if d == nil {
		return
	}
	if !d.started {
		if !ping.Reached() || ping.Reply == nil || !ping.Reply.ReplaceDevices {
			return // no pool to start with: a controller started with none deletes the published one
		}
		d.started = true
		p.handOnDevices(ctx, node.UID, res)
		return
	}
	if d.pub.OwnedBy(node.UID) && (len(res.Changes) == 0 || devicepool.Equal(res.Devices, d.handed)) {
		return // steady, or the cache has not caught up with the last pool handed on
	}
	p.handOnDevices(ctx, node.UID, res)
}

// handOnDevices hands res's pool to the controller of the node whose UID
// is owner, and logs it.
func (p *Node) handOnDevices(ctx context.Context, owner types.UID, res devicepool.Result) {
	d := p.devices
	for _, c := range res.Changes {
		p.log.Info("device change", "path", c.Path, "op", c.Op.String(), "old", c.Old, "new", c.New)
	}
	p.log.Info("devices handed to the ResourceSlice controller", "driver", d.driver, "pool", d.pool, "devices", len(res.Devices))
	d.handed = res.Devices
	p.metrics.DevicesHanded()
	d.pub.Publish(ctx, owner, res.Devices)
}
