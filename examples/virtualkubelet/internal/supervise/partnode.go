package supervise

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
)

// A part's node, as the parts supervisor runs it: a vnode.Node of its own
// (its registration, Lease, object and status patches, devices and the
// end of its pods' deletion, as any node's), whose pings are the
// supervisor's pings of the part (partFeed, source.go). What a fleet's
// node has of its own, a part's node shares with the others: it reads
// its node and its pods from the supervisor's caches (caches.Owned), writes
// through the supervisor's client, records its events through the
// supervisor's broadcaster, counts in the template's metrics, and has its
// Lease renewed by the process's renewer (internal/leases), so that a part's
// node costs its writes, and little more.

// The rate limit of the client every part's node of a process writes
// through. A fleet of N nodes writes, every 10 s, N Lease renewals (one
// update each) and, with the figures held back (NodeStatusUpdateFrequency,
// vnode's report.go), at most N status patches, so at most 2N/10 requests a
// second, besides the rare object patches; a steady fleet writes a status
// once every status report (5 minutes), and so about N/10 a second. The
// limit is half again the worst case of the fleet the provider is sized
// for, 5,000 parts (1,000 a second, and 1,500 when the Virtual Kubelet
// node controller read the node before each status patch): 1,500 a
// second, with a burst of two seconds' worth for a start, when
// every node registers (client-go's default, 5 a second, would let a
// fleet of 5,000 renew a Lease once every 1,000 s). The API server's
// priority and fairness, not this limit, guards the API server.
const (
	partsQPS   = 1500
	partsBurst = 2 * partsQPS
)

// PartsRestConfig is restConfig with the rate limit of the parts' client.
func PartsRestConfig(restConfig *rest.Config) *rest.Config {
	c := rest.CopyConfig(restConfig)
	c.QPS, c.Burst, c.RateLimiter = partsQPS, partsBurst, nil
	return c
}

// partNode is the runner of one part's node.
type partNode struct {
	name string
	p    *vnode.Node
	stop context.CancelFunc
	done chan struct{} // closed once its run has returned
	// seen says that the cache of the owned nodes has shown the node.
	seen bool
}

// start starts the runner of part's node, which registers the node, or
// serves it as stored, and waits for its pings; nil if it cannot have a
// client. known, if not nil, is the node as just read (readNew), which
// the runner's first start takes instead of reading it again.
func (s *PartsSupervisor) start(ctx context.Context, part string, known *vnode.Read) *partNode {
	cfg := s.cfg.ForPart(part)
	cfg.Process.Caches, cfg.Process.Events, cfg.Process.Leases, cfg.Process.Registering = s.owned, s.events, s.leases, s.registering
	client, err := s.newClient()
	if err != nil {
		s.log.Error("a client for a part's node; the next ping tries again", "part", part, "error", err)
		return nil
	}
	p := vnode.New(cfg, client, s.log.With("node", cfg.Static.Name, "part", part))
	p.Known = known
	n := &partNode{name: cfg.Static.Name, p: p, done: make(chan struct{})}
	run, stop := context.WithCancel(ctx)
	n.stop = stop
	go func() {
		defer close(n.done)
		_ = p.RunRetrying(run) // its configuration is the supervisor's, checked
	}()
	s.nodes[part] = n
	return n
}

// registrars is how many new parts' nodes register at once, each until
// its create is answered. The 5,000 parts of a first ping
// registered all at once sent 5,000 creates together; the API server's
// priority and fairness turned four in five away (429), and client-go
// sent them again and again: 5 creates a node. With a bound as wide as
// the renewer's workers (leases.MaxWorkers), the creates wait their turn
// in the provider, not at the API server.
const registrars = 64

// readers is how many reads of the nodes of new parts a ping makes at
// once: read one after the other, the 5,000 parts of a first ping took
// more than 9 minutes on a busy API server (a round trip each); the
// client's rate limit (partsQPS) bounds them still.
const readers = 16

// readNew reads from the API server the node of each part that decisions
// register, readers at a time, by part.
func (s *PartsSupervisor) readNew(ctx context.Context, decisions []parts.Decision) map[string]vnode.Read {
	var names []string
	for _, d := range decisions {
		if d.Action == parts.Register {
			names = append(names, d.Part)
		}
	}
	reads := make([]vnode.Read, len(names))
	next := make(chan int)
	var workers sync.WaitGroup
	for range min(readers, len(names)) {
		workers.Go(func() {
			for i := range next {
				node, err := s.client.CoreV1().Nodes().Get(ctx, s.cfg.Parts.NodeName(names[i]), metav1.GetOptions{})
				reads[i] = vnode.Read{Node: node, Err: err}
			}
		})
	}
	for i := range names {
		next <- i
	}
	close(next)
	workers.Wait()
	out := make(map[string]vnode.Read, len(names))
	for i, name := range names {
		out[name] = reads[i]
	}
	return out
}

// register starts the node of a part that the reply lists and no node
// serves, which registers it, and hands it ping; stored is the node of
// its name as the API server has it (readNew). A node of the part's name
// that is not its own (it lacks the ownership label) is left alone, and
// the part is not served; it is looked at again at the next ping.
func (s *PartsSupervisor) register(ctx context.Context, part string, ping nodeapply.Ping, r vnode.Read) {
	name := s.cfg.Parts.NodeName(part)
	stored, err := r.Node, r.Err
	switch {
	case err == nil && !s.cfg.Parts.Owns(stored):
		s.skip(part, fmt.Sprintf("a node named %s is there already, without the label %s=%s: another's, left alone, and the part %s is not served", name, vnode.OwnerLabel, s.cfg.Parts.Owner, part))
		return
	case err != nil && !apierrors.IsNotFound(err):
		s.log.Error("reading the node of a new part; the next ping tries again", "part", part, "node", name, "error", err)
		return
	}
	delete(s.skipped, part)
	s.log.Info("a new part: registering its node", "part", part, "node", name)
	if n := s.start(ctx, part, &r); n != nil {
		s.Count.Registered.Add(1)
		n.p.Feed().Put(ping, nil)
	}
}

// halt stops the runner and waits until it has stopped.
func (n *partNode) halt() {
	n.stop()
	<-n.done
}

// stopAll stops every runner, together, and waits until they have.
func (s *PartsSupervisor) stopAll() {
	for _, n := range s.nodes {
		n.stop()
	}
	for _, n := range s.nodes {
		<-n.done
	}
	s.nodes = nil
}

// Node returns the provider of part's node while it is served; nil
// when it is not.
func (s *PartsSupervisor) Node(part string) *vnode.Node {
	if n := s.nodes[part]; n != nil {
		return n.p
	}
	return nil
}

// Pods is how many pods bound to part's node are not terminal, as its
// cache has them; 1 while the node is not served or its cache does not
// run (pods).
func (s *PartsSupervisor) Pods(part string) int {
	if n := s.nodes[part]; n != nil {
		return n.pods()
	}
	return 1
}

// Owned returns the caches of the nodes it owns, and of every node's pods,
// while it runs.
func (s *PartsSupervisor) Owned() *caches.Caches { return s.owned }

// pods is how many pods bound to the node are not terminal, as its cache
// has them (parts.Node.Pods); 1 while its cache does not run, so that a
// node whose pods are not known is never deleted.
func (n *partNode) pods() int {
	c := n.p.Caches()
	if c == nil {
		return 1
	}
	return holding(c.BoundPods(), n.name)
}

// holding counts the pods of pods bound to the node name that are not
// terminal.
func holding(pods []*corev1.Pod, name string) int {
	count := 0
	for _, pod := range pods {
		if pod.Spec.NodeName == name && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			count++
		}
	}
	return count
}

// remove stops the runner of a part gone for its grace whose node no pod
// holds, and deletes the node: read again once the runner has stopped,
// its pods listed from the API server, judged again by parts.Step, and
// deleted with its UID and resourceVersion as preconditions, so that a
// node someone changed since, or another of the same name, is never
// deleted. A node that is not deleted after all is served again at the
// next ping (adopt), and judged again.
func (s *PartsSupervisor) remove(ctx context.Context, d parts.Decision, ping nodeapply.Ping) {
	n := s.nodes[d.Part]
	delete(s.nodes, d.Part)
	n.halt()
	log := s.log.With("part", d.Part, "node", n.name)
	nodes := s.client.CoreV1().Nodes()
	fresh, err := nodes.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		log.Error("reading a gone part's node before its deletion; the next ping tries again", "error", err)
		return
	}
	pods, err := s.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.name).String(),
	})
	if err != nil {
		log.Error("listing a gone part's pods before its deletion; the next ping tries again", "error", err)
		return
	}
	held := make([]*corev1.Pod, len(pods.Items))
	for i := range pods.Items {
		held[i] = &pods.Items[i]
	}
	if !s.cfg.Parts.Owns(fresh) || !s.deletes(ping, d.Part, fresh, holding(held, n.name)) {
		log.Info("a gone part's node is not deleted after all: it changed since (a pod, its taint, its labels); served again if it is still this provider's")
		return
	}
	err = nodes.Delete(ctx, n.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &fresh.UID, ResourceVersion: &fresh.ResourceVersion}})
	if err != nil && !apierrors.IsNotFound(err) {
		log.Error("deleting a gone part's node; it is served again, and the next ping tries again", "error", err)
		return
	}
	s.deleted[fresh.Name] = fresh.UID
	s.Count.Deleted.Add(1)
	log.Info("a part gone for its grace, whose node no pod holds: its node is deleted", "uid", fresh.UID)
}

// deletes reports whether parts.Step deletes node, the node of part as
// stored, held by pods pods, at ping.
func (s *PartsSupervisor) deletes(ping nodeapply.Ping, part string, node *corev1.Node, pods int) bool {
	for _, d := range parts.Step(ping, []parts.Node{{Part: part, Node: node, Pods: pods}}, s.opts.Apply) {
		if d.Node == node {
			return d.Action == parts.Delete
		}
	}
	return false
}
