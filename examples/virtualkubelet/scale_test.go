package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestValidityAtScale parses 10,000 generated adversarial replies (fixed
// seeds: out-of-range and wrong-typed values, duplicates, reserved keys,
// huge values, broken JSON), applies each to a stored base node, and sends
// every resulting node to the real API server with dryRun=All, as an
// update of the node and of its status. None may be refused.
func TestValidityAtScale(t *testing.T) {
	needsControlPlane(t)
	const replies = 10000
	base := baseNode(t)
	var sent, refused atomic.Int64
	start := time.Now()
	seeds := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for seed := range seeds {
				body := gen.ReplyBody().Example(seed)
				opts := nodeapply.Options{Reply: pingstatus.Options{ProtectedKeys: []string{vnode.StaticTaintKey}}, ReplaceAllTaints: seed%4 == 3}
				patch, _ := pingstatus.Parse(body, opts.Reply)
				node := nodeapply.Apply(base, nodeapply.Ping{Reply: &patch}, opts).Node.DeepCopy()
				// No precondition: the node lifecycle controller writes the
				// stored node meanwhile, and this tests validity, not
				// concurrency.
				node.ResourceVersion = ""
				dryRun := metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}
				for _, update := range []func(context.Context, *corev1.Node, metav1.UpdateOptions) (*corev1.Node, error){
					client.CoreV1().Nodes().Update, client.CoreV1().Nodes().UpdateStatus,
				} {
					sent.Add(1)
					if _, err := update(context.Background(), node, dryRun); err != nil {
						if refused.Add(1) <= 5 {
							t.Errorf("seed %d: %s refused: %v", seed, body, err)
						}
					}
				}
			}
		})
	}
	for seed := range replies {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	t.Logf("%d replies, %d dry-run updates in %s, %d refused", replies, sent.Load(), time.Since(start).Round(time.Millisecond), refused.Load())
	if refused.Load() != 0 {
		t.Errorf("the API server refused %d of %d updates", refused.Load(), sent.Load())
	}
}

// baseNode stores a node with static, protected, administrator and plugin
// taints, and returns it as stored.
func baseNode(t *testing.T) *corev1.Node {
	t.Helper()
	node := vnode.StaticNode("validity-base")
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: gen.SharedKeys[2], Value: "admin", Effect: corev1.TaintEffectNoSchedule})
	node.Annotations = map[string]string{nodeapply.DefaultOwnershipAnnotation: gen.SharedKeys[0] + ":NoSchedule"}
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: gen.SharedKeys[0], Value: "plugin", Effect: corev1.TaintEffectNoSchedule})
	created, err := client.CoreV1().Nodes().Create(t.Context(), node, metav1.CreateOptions{}) // with its status
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	return created
}
