package caller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
)

// Step applies a ping to node, and says how many warnings its reply had.
func Step(node *corev1.Node, ping nodeapply.Ping, opts nodeapply.Options) (nodeapply.Result, int) {
	ping, w := nodeapply.Judge(ping, opts.Reply)
	return nodeapply.Apply(node, ping, opts), len(w)
}
