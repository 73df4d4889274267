// migrates: res := nodeapply.Apply(node, ping, opts)
// by hand: publishdevices.new.go, since the row says it in words
package caller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

// Step applies a ping to node and to its pool as published.
func Step(node *corev1.Node, published, pool []devicepool.Device, ping nodeapply.Ping, opts nodeapply.Options) (nodeapply.Result, []devicepool.Device) {
	_ = published
	opts.PublishDevices = true
	ping.Devices = pool
	res := nodeapply.Apply(node, ping, opts)
	return res, res.Devices
}
