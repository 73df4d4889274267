// migrates: nodeapply.Options{ProtectedKeys: k}
package caller

import (
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

var _ pingstatus.Options

// Options protects the taint keys k.
func Options(k []string) nodeapply.Options {
	return nodeapply.Options{ProtectedKeys: k}
}
