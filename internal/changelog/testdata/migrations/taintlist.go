// migrates: pingstatus.TaintList(t...)
package caller

import "github.com/pingnode/pingnode/pingstatus"

// Reply is a plugin's reply with taints t.
func Reply(t ...pingstatus.TaintResponse) pingstatus.NodeResponse {
	return pingstatus.NodeResponse{Taints: pingstatus.TaintList(t...)}
}
