package nodeapply

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/text"
)

// pingResponse returns the value of interLink's ping-response annotation
// after the ping: the body, cleaned and cut, or "" when the ping failed.
func (a *checker) pingResponse() string {
	if !a.ping.Reached() {
		return ""
	}
	return text.Clean(string(a.ping.Body), MaxPingResponseBytes)
}

// pingResponseUnchanged reports whether the annotation is as the ping
// asks, or not asked for.
func (a *checker) pingResponseUnchanged() bool {
	if !a.opts.KeepPingResponse {
		return true
	}
	v, ok := a.in.Annotations[PingResponseAnnotation]
	return ok && v == a.pingResponse()
}

func (a *applier) setPingResponse(out *corev1.Node) {
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[PingResponseAnnotation] = a.pingResponse()
}
