// migrates: res.NeedsDevices()
package caller

import (
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

// Publish says whether the pool is to be published again.
func Publish(res nodeapply.Result, pool devicepool.Result) bool {
	_ = pool
	return res.NeedsDevices()
}
