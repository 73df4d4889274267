// migrates: nodeapply.CompareDevices
package caller

import (
	"slices"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

var _ = nodeapply.Apply

// Sort sorts a pool.
func Sort(pool []devicepool.Device) { slices.SortFunc(pool, nodeapply.CompareDevices) }
