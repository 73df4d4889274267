// migrates: pingstatus.PingResponse{Status: s, Resources: r}
package caller

import "github.com/pingnode/pingnode/pingstatus"

// Reply is a reply of status s with resources r.
func Reply(s string, r *pingstatus.ResourcesResponse) pingstatus.PingResponse {
	return pingstatus.PingResponse{Status: s, Resources: r}
}
