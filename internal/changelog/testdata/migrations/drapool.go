// migrates: dra.Pool(s, c, driver, pool)
package caller

import (
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
)

// Published is the pool as published.
func Published(s []*resourcev1.ResourceSlice, c []*resourcev1.ResourceClaim, boundPods []*corev1.Pod, ping nodeapply.Ping, driver, pool string) []devicepool.Device {
	_, _ = boundPods, ping
	return dra.Pool(s, c, driver, pool)
}
