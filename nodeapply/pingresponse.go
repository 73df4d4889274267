package nodeapply

import (
	"github.com/pingnode/pingnode/internal/text"
)

// pingResponse keeps interLink's ping-response annotation, with
// Options.KeepPingResponse (rule text-bounded): the reply's body, cleaned
// and cut, or "" when the ping failed.
func (a *applier) pingResponse() {
	if !a.opts.KeepPingResponse {
		return
	}
	value := ""
	if a.ping.Reached() {
		value = text.Clean(string(a.ping.Body), MaxPingResponseBytes)
	}
	if v, ok := a.node().Annotations[PingResponseAnnotation]; ok && v == value {
		return
	}
	out := a.edit(concernPingResponse)
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[PingResponseAnnotation] = value
}
