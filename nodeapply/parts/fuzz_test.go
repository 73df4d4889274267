package parts_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// FuzzStep: arbitrary part names (listed, comma-separated, in any order,
// repeated or not; served likewise), nodes (each byte of shape says of
// one node whether it is nil, has the part-gone taint, with or without a
// time, and how many pods hold it), times in seconds from t0 and a grace
// never make Step panic or modify its inputs, and Step keeps the laws of
// checkLaws.
func FuzzStep(f *testing.F) {
	f.Add("a,b,c", "a,b,d", []byte{0, 0x06, 0x0e}, int64(100), int64(0), int64(0), uint8(3))
	f.Add("", "a,a,b", []byte{0x0e, 0x02, 0x01}, int64(-5), int64(-100), int64(20), uint8(3))
	f.Add("c,a,c", "", []byte{}, int64(0), int64(0), int64(0), uint8(4))
	f.Add("x", "x,y", []byte{0xff, 0x0e}, int64(1<<62), int64(-1<<62), int64(1<<40), uint8(0))
	f.Fuzz(func(t *testing.T, listed, servedParts string, shape []byte, atSec, addedSec, graceSec int64, kind uint8) {
		ping := nodeapply.Ping{At: t0.Add(time.Duration(atSec) * time.Second)}
		if atSec == 0 {
			ping.At = time.Time{}
		}
		switch kind % 5 {
		case 0:
			ping.Failure = "HTTP 503"
			ping.Reply = listing()
		case 1: // no reply
		case 2:
			ping.Reply = &pingstatus.NodePatch{Kind: pingstatus.Legacy}
		default:
			var ps []pingstatus.Part
			if listed != "" {
				for k, name := range strings.Split(listed, ",") {
					ps = append(ps, part(name, fmt.Sprint(k+1)))
				}
			}
			reply := rawListing(ps...)
			reply.PartsIncomplete = kind%5 == 4
			ping.Reply = judge(reply)
		}
		var nodes []parts.Node
		if servedParts != "" {
			for i, name := range strings.Split(servedParts, ",") {
				var b byte
				if i < len(shape) {
					b = shape[i]
				}
				n := parts.Node{Part: name, Pods: int(b>>4) - 1}
				if b&1 == 0 {
					n.Node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("vk-%s-%d", name, i)}}
					if b&2 != 0 {
						taint := corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule}
						if b&4 != 0 {
							added := metav1.NewTime(t0.Add(time.Duration(addedSec) * time.Second))
							taint.TimeAdded = &added
						}
						if b&8 != 0 {
							taint.Effect = corev1.TaintEffectNoExecute
						}
						n.Node.Spec.Taints = []corev1.Taint{taint}
					}
				}
				nodes = append(nodes, n)
			}
		}
		opts := nodeapply.Options{PartGrace: time.Duration(graceSec) * time.Second}
		before := snap(ping, nodes)
		got := parts.Step(ping, nodes, opts)
		before.check(t, ping, nodes)
		checkLaws(t, ping, nodes, opts, got)
	})
}
