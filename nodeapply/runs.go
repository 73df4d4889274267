package nodeapply

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// RunsOnBackend reports whether the backend runs pod as of a ping made at
// at: the pod is Running and started before at. Only then is what it holds
// out of the backend's figures of a reply read as available, so only then
// does it count in [Ping.Held], and a device its claim holds as running
// (devicepool.Device.Running). A pod started since the ping, or whose
// start the provider has not seen yet, is missed for one ping: the node
// then says a little less than it could, never more than the backend has.
func RunsOnBackend(pod *corev1.Pod, at time.Time) bool {
	return pod != nil && pod.Status.Phase == corev1.PodRunning &&
		pod.Status.StartTime != nil && pod.Status.StartTime.Time.Before(at)
}
