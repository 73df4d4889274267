// migrates: nodeapply.Failure(code, err)
package caller

import (
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/failure"
)

var (
	_ = failure.Of
	_ nodeapply.Ping
)

// Failed is a failed ping's words.
func Failed(code int, err error) string { return nodeapply.Failure(code, err) }
