package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/election"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/rights"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// apiRequest is a request a provider sent, and the API server's answer.
type apiRequest struct {
	method, path string
	status       int
}

// requestLog records a client's requests and answers.
type requestLog struct {
	mu       sync.Mutex
	requests []apiRequest
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// clientFor returns a client of id that records its requests in l.
func (l *requestLog) clientFor(t *testing.T, id *identity) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(l.configFor(id))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// configFor is id's configuration, whose requests l records.
func (l *requestLog) configFor(id *identity) *rest.Config {
	config := rest.CopyConfig(id.config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				l.mu.Lock()
				l.requests = append(l.requests, apiRequest{r.Method, r.URL.Path, resp.StatusCode})
				l.mu.Unlock()
			}
			return resp, err
		})
	})
	return config
}

// refused reports whether the API server answered 403 Forbidden to a
// request of this method and path, and lists the refusals.
func (l *requestLog) refused(method, path string) (bool, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []string
	for _, r := range l.requests {
		if r.status == http.StatusForbidden {
			if r.method == method && r.path == path {
				return true, ""
			}
			all = append(all, r.method+" "+r.path)
		}
	}
	return false, "refused so far: [" + strings.Join(all, ", ") + "]"
}

// ruleKey names a rule by where it is, what it is of, and its verbs.
func ruleKey(namespace string, r rbacv1.PolicyRule) string {
	if namespace == "" {
		namespace = "cluster"
	}
	return namespace + " " + strings.Join(r.Resources, ",") + " " + strings.Join(r.Verbs, ",")
}

// without returns a's objects with the rule of this key taken away.
func without(t *testing.T, a rights.Access, key string) []runtime.Object {
	t.Helper()
	objects := a.Objects()
	found := 0
	for _, obj := range objects {
		var namespace string
		var rules *[]rbacv1.PolicyRule
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			rules = &o.Rules
		case *rbacv1.Role:
			namespace, rules = o.Namespace, &o.Rules
		default:
			continue
		}
		*rules = slices.DeleteFunc(*rules, func(r rbacv1.PolicyRule) bool {
			if ruleKey(namespace, r) == key {
				found++
				return true
			}
			return false
		})
	}
	if found != 1 {
		t.Fatalf("%d rules %q", found, key)
	}
	return objects
}

// rightsCase is a provider run as a ServiceAccount with every rule of its
// configuration but one.
type rightsCase struct {
	name     string // of the node
	election *election.Election
	id       *identity
	log      requestLog
	client   kubernetes.Interface // id's, recording in log
	cfg      vnode.Config
	reg      *prometheus.Registry
	plugin   *fakePlugin
}

// provider returns a provider of the case's node, as its ServiceAccount.
func (c *rightsCase) provider(t *testing.T) *vnode.Node {
	return vnode.New(c.cfg, c.client, slog.New(slog.NewTextHandler(t.Output(), nil)))
}

// run runs the provider until the test ends, and deletes what it left.
func (c *rightsCase) run(t *testing.T) *vnode.Node {
	t.Helper()
	p := c.provider(t)
	runProvider(t, p, func() { deleteNode(t, c.name) })
	return p
}

// awaitRefused waits until the API server has refused the request.
func (c *rightsCase) awaitRefused(t *testing.T, method, path string) {
	t.Helper()
	eventually(t, "403 to "+method+" "+path, func(context.Context) (bool, string) { return c.log.refused(method, path) })
}

// writeErrors is the provider's pingnode_node_write_errors_total of kind.
func (c *rightsCase) writeErrors(t *testing.T, kind string) float64 {
	t.Helper()
	n, _ := gather(t, c.reg).value("pingnode_node_write_errors_total", "node", c.name, "kind", kind)
	return n
}

// refusedStartLimit bounds how long a start refused for want of a right
// may take. What it proves: the refusal ends the start at once, not the
// cache sync's timeout (caches.SyncTimeout, 30 s), which would be the wait
// of a cache whose list is refused had its refusal not ended it. It is a
// third of that timeout, for eleven providers started at once beside the
// control plane under -race on 2 cores; seen: well under a second.
const refusedStartLimit = caches.SyncTimeout / 3

// startRefused runs the provider's start once and checks it failed at
// once, with the API server's 403 to the request, which says it cannot
// do what the rule allowed; the node is not registered.
func (c *rightsCase) startRefused(t *testing.T, method, path, says string) {
	t.Helper()
	took, err := runOnce(t, c.provider(t))
	t.Cleanup(func() { deleteNode(t, c.name) })
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), says) {
		t.Errorf("the start: %v, want 403 Forbidden: %s", err, says)
	}
	if took > refusedStartLimit {
		t.Errorf("the start failed after %s, want at once (within %s)", took, refusedStartLimit)
	}
	if ok, why := c.log.refused(method, path); !ok {
		t.Errorf("no 403 to %s %s: %s", method, path, why)
	}
	if _, err := client.CoreV1().Nodes().Get(t.Context(), c.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the node: %v, want none", err)
	}
	t.Logf("the start failed after %s: %v", took.Round(time.Millisecond), err)
}

// leaseAbsent checks the Lease is not there.
func leaseAbsent(t *testing.T, namespace, name string) {
	t.Helper()
	if _, err := client.CoordinationV1().Leases(namespace).Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Lease %s/%s: %v, want none", namespace, name, err)
	}
}

// neverLeads runs the leader election of the case as its ServiceAccount
// until the API server has refused the request, and checks it did not
// lead, wrote no Lease, and says it is not ready.
func (c *rightsCase) neverLeads(t *testing.T, method, path string) {
	t.Helper()
	all := c.cfg.Metrics
	all.Expect(1, true)
	var led atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	go func() {
		done <- c.election.Lead(ctx, c.client, all, log, func() { t.Error("lost a lead it never had") },
			func(context.Context) error { led.Store(true); return nil })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("lead: %v", err)
		}
		err := client.CoordinationV1().Leases(c.election.Namespace).Delete(context.Background(), c.election.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})
	c.awaitRefused(t, method, path)
	if led.Load() {
		t.Error("it led")
	}
	if leader, _ := gather(t, c.reg).value("pingnode_leader"); leader != 0 {
		t.Errorf("pingnode_leader %g, want 0", leader)
	}
	if ok, why := all.Ready(); ok {
		t.Errorf("/readyz: ready (%s), want not", why)
	}
	leaseAbsent(t, c.election.Namespace, c.election.Name)
}

// rightsSymptoms are what breaks without each rule, by ruleKey. Every
// wait is for the API server's refusal of the request the rule allows,
// seen by the provider's own client, and so as short as the provider's
// first try: no wait is for something not to happen. What did not happen
// (no node, no Lease, no event, no lead) is checked once it was refused.
var rightsSymptoms = map[string]func(t *testing.T, c *rightsCase){
	"cluster nodes create": func(t *testing.T, c *rightsCase) {
		// The node controller registers the node it did not find.
		c.startRefused(t, http.MethodPost, "/api/v1/nodes", `cannot create resource "nodes"`)
	},
	"cluster nodes get": func(t *testing.T, c *rightsCase) {
		// The start reads the node first.
		c.startRefused(t, http.MethodGet, "/api/v1/nodes/"+c.name, `cannot get resource "nodes"`)
	},
	"cluster nodes list,watch": func(t *testing.T, c *rightsCase) {
		// The node's cache lists it (or watches it, with client-go's
		// streaming lists), selected by name.
		c.startRefused(t, http.MethodGet, "/api/v1/nodes", "the cache of *v1.Node cannot sync")
	},
	"cluster nodes patch": func(t *testing.T, c *rightsCase) {
		// The status lands; the plugin's taint does not.
		p := c.run(t)
		c.plugin.reply(http.StatusOK, goodReply, 0)
		c.awaitRefused(t, http.MethodPatch, "/api/v1/nodes/"+c.name)
		eventually(t, "the status lands all the same", func(ctx context.Context) (bool, string) {
			return hasResources(stored(ctx, t, c.name), goodResources)
		})
		if taintSet(stored(t.Context(), t, c.name))[pluginTaint] {
			t.Error("the plugin's taint is on the node")
		}
		if n := c.writeErrors(t, metrics.KindObject); n < 1 || p.Count.WriteErrors.Load() < 1 {
			t.Errorf("pingnode_node_write_errors_total{kind=taints} %g, want the refusal counted", n)
		}
	},
	"cluster nodes/status patch": func(t *testing.T, c *rightsCase) {
		// The node is registered with the static status, which then
		// never changes; the object patch lands.
		c.run(t)
		c.plugin.reply(http.StatusOK, goodReply, 0)
		c.awaitRefused(t, http.MethodPatch, "/api/v1/nodes/"+c.name+"/status")
		eventually(t, "the refusal counted, the plugin's taint stored", func(ctx context.Context) (bool, string) {
			n := c.writeErrors(t, metrics.KindStatus)
			return n >= 1 && taintSet(stored(ctx, t, c.name))[pluginTaint], fmt.Sprintf("%g status write errors", n)
		})
		node := stored(t.Context(), t, c.name)
		if ok, why := hasResources(node, map[string]string{"cpu": "100", "memory": "128Gi"}); !ok {
			t.Errorf("the status changed: %s, want the static one", why)
		}
		if c := vnode.ConditionNamed(node, nodeapply.DefaultConnectivityCondition); c != nil {
			t.Errorf("%s %s, want none: the provider stored no status", c.Type, c.Status)
		}
	},
	"cluster pods list,watch": func(t *testing.T, c *rightsCase) {
		// The cache of the node's pods, which -held reads.
		c.startRefused(t, http.MethodGet, "/api/v1/pods", "the cache of *v1.Pod cannot sync")
	},
	"cluster pods delete": func(t *testing.T, c *rightsCase) {
		// A pod being deleted on the node is never finished: it stays
		// Terminating, as with no kubelet.
		p := c.run(t)
		c.plugin.reply(http.StatusOK, goodReply, 0)
		pod := c.name + "-deleted"
		createTestPod(t, terminatingPod(pod, c.name))
		deleteGracefully(t, pod)
		c.awaitRefused(t, http.MethodDelete, "/api/v1/namespaces/"+metav1.NamespaceDefault+"/pods/"+pod)
		morePings(t, p, 3)
		if ok, why := terminating(t.Context(), pod); !ok {
			t.Errorf("without the right: %s, want it Terminating", why)
		}
	},
	corev1.NamespaceNodeLease + " leases create": func(t *testing.T, c *rightsCase) {
		// The node runs, with no heartbeat: the node lifecycle controller
		// would mark it Unknown after its grace.
		c.run(t)
		c.awaitRefused(t, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/"+corev1.NamespaceNodeLease+"/leases")
		leaseAbsent(t, corev1.NamespaceNodeLease, c.name)
	},
	corev1.NamespaceNodeLease + " leases get,update": func(t *testing.T, c *rightsCase) {
		// The Lease of a node registered just now is created without a
		// read, and never renewed: its first renewal is refused, and so
		// is the read that follows.
		c.run(t)
		path := "/apis/coordination.k8s.io/v1/namespaces/" + corev1.NamespaceNodeLease + "/leases/" + c.name
		c.awaitRefused(t, http.MethodPut, path)
		c.awaitRefused(t, http.MethodGet, path)
		lease, err := nodeLease(t.Context(), c.name)
		if err != nil {
			t.Fatalf("the Lease created at registration: %v", err)
		}
		if renewed := lease.Spec.RenewTime.Sub(lease.CreationTimestamp.Time); renewed > 2*time.Second {
			t.Errorf("the Lease renewed %s after its creation, want never", renewed)
		}
	},
	"cluster events create,patch": func(t *testing.T, c *rightsCase) {
		// The node's first Ready is an event, NodeReady.
		c.run(t)
		c.awaitRefused(t, http.MethodPost, "/api/v1/namespaces/"+metav1.NamespaceDefault+"/events")
		// The node lifecycle controller's own (RegisteredNode) may be there.
		if events := fromProvider(nodeEventsOf(t.Context(), t, c.name)); len(events) > 0 {
			t.Errorf("the provider's events on the node:%s", describe(events))
		}
	},
	testElectionNS + " leases create": func(t *testing.T, c *rightsCase) {
		// No replica has made the Lease yet.
		c.neverLeads(t, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/"+testElectionNS+"/leases")
	},
	testElectionNS + " leases get,update": func(t *testing.T, c *rightsCase) {
		// A candidate reads the Lease before it takes it.
		c.neverLeads(t, http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/"+testElectionNS+"/leases/"+c.election.Name)
	},
}

// TestRightsEachNeeded takes each rule of the provider's rights away in
// turn (a provider of one node that counts what its pods hold, with an
// election for the election's rules), runs it as a ServiceAccount bound to
// all the others, and shows what breaks (rightsSymptoms): no rule is
// there without a reason. A rule with no symptom fails the test. The
// cases run in parallel, each with a ServiceAccount and a node of its own.
func TestRightsEachNeeded(t *testing.T) {
	needsControlPlane(t)
	electionOf := func(name string) *election.Election {
		return &election.Election{
			Namespace: testElectionNS, Name: "pingnode-" + name, Identity: "rights",
			LeaseDuration: testElectionLease, RenewDeadline: testElectionRenew, RetryPeriod: testElectionRetry,
		}
	}
	all := accessFor(testNamespace, "rights", []vnode.Config{{Static: vnode.StaticNode("vk-rights"), CountHeld: true}}, electionOf("vk-rights"))
	plain := all
	plain.Election = nil
	ofNodes := map[string]bool{}
	for _, r := range plain.Roles() {
		for _, rule := range r.Rules {
			ofNodes[ruleKey(r.Namespace, rule.PolicyRule)] = true
		}
	}
	i := 0
	for _, r := range all.Roles() {
		for _, rule := range r.Rules {
			key := ruleKey(r.Namespace, rule.PolicyRule)
			symptom, ok := rightsSymptoms[key]
			if !ok {
				symptom, ok = jobsSymptoms[key]
			}
			if !ok {
				t.Errorf("the rule %q (%s) has no symptom here: show what breaks without it, or take it away", key, rule.Why)
				continue
			}
			name := fmt.Sprintf("vk-rights-%d", i)
			i++
			t.Run(key, func(t *testing.T) {
				t.Parallel()
				plugin := &fakePlugin{}
				plugin.reply(http.StatusOK, "ok", 0)
				plugin.server = httptest.NewServer(plugin)
				t.Cleanup(plugin.closeServer)
				c := &rightsCase{name: name, plugin: plugin, reg: prometheus.NewRegistry()}
				clearNodeEvents(t, name)
				c.cfg = testConfig(name, plugin.server.URL+"/status")
				c.cfg.CountHeld = true
				c.cfg.Metrics = metrics.New(c.reg)
				if !ofNodes[key] {
					c.election = electionOf(name)
				}
				a := accessFor(testNamespace, fmt.Sprintf("%s-%d", name, identities.Add(1)), []vnode.Config{c.cfg}, c.election)
				c.id = grantObjects(t, a, without(t, a, key))
				c.client = c.log.clientFor(t, c.id)
				t.Logf("without %s (%s)", key, rule.Why)
				symptom(t, c)
			})
		}
	}
}
