// migrates: nodeapply.Device
package caller

import (
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

var (
	_ devicepool.Device
	_ = nodeapply.Apply
)

// Devices is a pool.
var Devices []nodeapply.Device
