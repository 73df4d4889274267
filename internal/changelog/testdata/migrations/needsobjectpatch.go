// migrates: res.NeedsTaintsPatch()
package caller

import "github.com/pingnode/pingnode/nodeapply"

// Needs says whether res needs an object patch.
func Needs(res nodeapply.Result) bool { return res.NeedsTaintsPatch() }
