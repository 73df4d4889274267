// migrates: *r.Taints
package caller

import "github.com/pingnode/pingnode/pingstatus"

// Count is how many taints r carries.
func Count(r pingstatus.NodeResponse) int {
	return len(*r.Taints)
}
