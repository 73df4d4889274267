// migrates: nodeapply.EqualDevices
package caller

import (
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

var _ = nodeapply.Apply

// Same says whether two pools are the same.
func Same(a, b []devicepool.Device) bool { return nodeapply.EqualDevices(a, b) }
