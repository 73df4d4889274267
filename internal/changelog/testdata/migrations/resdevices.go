// migrates: res.Devices
package caller

import (
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

// Devices is the pool a ping asks for.
func Devices(res nodeapply.Result, pool devicepool.Result) []devicepool.Device {
	_ = pool
	return res.Devices
}
