// migrates: res.DeviceChanges
package caller

import (
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

// Changes are the pool's changes.
func Changes(res nodeapply.Result, pool devicepool.Result) int {
	_ = pool
	return len(res.DeviceChanges)
}
