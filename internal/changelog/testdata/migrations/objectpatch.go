// migrates: res.TaintsPatch()
package caller

import "github.com/pingnode/pingnode/nodeapply"

// Patch is the object patch of res.
func Patch(res nodeapply.Result) []byte { return res.TaintsPatch() }
