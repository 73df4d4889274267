package caller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

// Step applies a ping to node and to its pool as published.
func Step(node *corev1.Node, published []devicepool.Device, ping nodeapply.Ping, opts nodeapply.Options) (nodeapply.Result, []devicepool.Device) {
	res := nodeapply.Apply(node, ping, opts)
	pool := devicepool.Apply(published, ping, opts.Reply)
	return res, pool.Devices
}
