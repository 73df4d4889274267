// migrates: if ping.Reached() { p, w := pingstatus.Parse(ping.Body, opts.Reply); ping.Reply = &p }
// still compiles: Apply now reads a ping's Body itself; the migration judges the reply once
// by hand: judge.new.go, since the warnings the old form declared in its if are used after it
package caller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Step applies a ping to node, and says how many warnings its reply had.
func Step(node *corev1.Node, ping nodeapply.Ping, opts nodeapply.Options) (nodeapply.Result, int) {
	var n int
	if ping.Reached() {
		p, w := pingstatus.Parse(ping.Body, opts.Reply)
		ping.Reply = &p
		n = len(w)
	}
	return nodeapply.Apply(node, ping, opts), n
}
