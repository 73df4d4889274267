// migrates: nodeapply.StatusPatch(node, res.Node)
package caller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
)

// Patch is the patch of what Apply changed of node's status.
func Patch(node *corev1.Node, ping nodeapply.Ping, opts nodeapply.Options) []byte {
	res := nodeapply.Apply(node, ping, opts)
	return nodeapply.StatusPatch(node, res.Node)
}
