package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
)

// apiWrite is a request that changes something, as a replica's API proxy
// saw it: when it arrived, what it was, and the API server's answer.
type apiWrite struct {
	replica      string
	at           time.Time
	method, path string
	status       int
}

func (w apiWrite) String() string {
	return fmt.Sprintf("%s %s %s %s: %d", w.at.Format("15:04:05.000"), w.replica, w.method, w.path, w.status)
}

// apiWrites is the writes of every replica, in the order they arrived.
type apiWrites struct {
	mu     sync.Mutex
	writes []apiWrite
}

func (a *apiWrites) add(w apiWrite) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.writes = append(a.writes, w)
}

func (a *apiWrites) all() []apiWrite {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]apiWrite(nil), a.writes...)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// apiProxy is a replica's way to the API server.
type apiProxy struct {
	kubeconfig string
	// cut, set, makes the proxy close the connection of every request
	// instead of passing it on: the replica's API connection is cut.
	cut atomic.Bool
}

// startAPIProxy starts a proxy to the test environment's API server for
// one replica, which records its writes in log, and writes a kubeconfig
// that talks to the API server through it with id's token. The proxy
// passes each request on as it came, its credentials with it: the API
// server authorizes the replica's ServiceAccount.
func startAPIProxy(t *testing.T, replica string, id *identity, log *apiWrites) *apiProxy {
	t.Helper()
	// How to reach the API server and trust it, without credentials.
	transport, err := rest.TransportFor(rest.AnonymousClientConfig(envConfig))
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(envHost)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	p := &apiProxy{}
	// TLS, self-signed: a kubeconfig's credentials are sent only over TLS.
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.cut.Load() {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			proxy.ServeHTTP(w, r)
			return
		}
		at := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(rec, r)
		log.add(apiWrite{replica: replica, at: at, method: r.Method, path: r.URL.Path, status: rec.status})
	}))
	t.Cleanup(server.Close)
	p.kubeconfig = id.kubeconfig(t, server.URL)
	return p
}

// nodeWrite reports whether w writes the node of this name or its Lease
// in kube-node-lease: what only the leader may do.
func nodeWrite(w apiWrite, name string) bool {
	return w.path == "/api/v1/nodes" ||
		strings.HasPrefix(w.path, "/api/v1/nodes/"+name) ||
		w.path == "/apis/coordination.k8s.io/v1/namespaces/"+corev1.NamespaceNodeLease+"/leases/"+name ||
		w.path == "/apis/coordination.k8s.io/v1/namespaces/"+corev1.NamespaceNodeLease+"/leases"
}

// leaseHolder is the holder of the leader election Lease, or "".
func leaseHolder(ctx context.Context, namespace, name string) string {
	lease, err := client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// Leader election timings of the takeover tests: kube-controller-manager's
// divided by about 7.
const (
	testElectionLease  = 2 * time.Second
	testElectionRenew  = 1500 * time.Millisecond
	testElectionRetry  = 500 * time.Millisecond
	testElectionNS     = metav1.NamespaceDefault
	replicaA, replicaB = "replica-a", "replica-b"
	flappingTaint      = "vendor.example.com/flap=x:NoSchedule"
)

// takeover is two replicas of the provider for one node, as child
// processes, each talking to the API server through its own proxy, and
// the plugin they ping.
type takeover struct {
	name, lease    string
	plugin         *fakePlugin
	writes         apiWrites
	a, b           *providerProcess
	proxyA, proxyB *apiProxy
	// notReady lists the versions of the node, from startTakeover on,
	// whose Ready was not True; stopWatch ends the watch.
	notReady  []string
	stopWatch func()
}

// startTakeover starts two replicas whose Lease lasts leaseFor: it starts
// replica-a, waits until it leads and the node is
// Ready with the plugin's good reply, starts replica-b, adds an
// administrator's taint, and has the plugin flap (a second taint comes
// and goes, and two pings fail) while replica-a leads.
func startTakeover(t *testing.T, name string, leaseFor time.Duration) *takeover {
	t.Helper()
	s := &takeover{name: name, lease: "pingnode-" + name}
	t.Cleanup(func() { // after the replicas are killed
		deleteNode(t, name)
		err := client.CoordinationV1().Leases(testElectionNS).Delete(context.Background(), s.lease, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the election's Lease: %v", err)
		}
	})
	s.plugin = &fakePlugin{}
	s.plugin.reply(http.StatusOK, goodReply, 0)
	s.plugin.server = httptest.NewServer(s.plugin)
	t.Cleanup(s.plugin.closeServer)
	args := []string{
		"-node", name, "-plugin", s.plugin.server.URL + "/status", "-interval", "250ms", "-timeout", "200ms",
		"-leader-elect", "-leader-elect-namespace", testElectionNS,
		"-leader-elect-lease-duration", leaseFor.String(), "-leader-elect-renew-deadline", testElectionRenew.String(),
		"-leader-elect-retry-period", testElectionRetry.String(), "-metrics-addr", "127.0.0.1:0",
	}
	// Both replicas run as one ServiceAccount, as a Deployment's pods do,
	// with the rights -print-rbac gives for their flags.
	account := grant(t, name, accessOfArgs(t, args))
	replica := func(id string) (*providerProcess, *apiProxy) {
		proxy := startAPIProxy(t, id, account, &s.writes)
		return runProviderProcess(t, proxy.kubeconfig, append([]string{"-leader-elect-id", id}, args...)...), proxy
	}
	s.a, s.proxyA = replica(replicaA)
	s.awaitLeader(t, replicaA, 20*time.Second)
	s.b, s.proxyB = replica(replicaB)
	eventually(t, "the good reply is stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, false) })
	// The leader says it leads and pings; the standby neither.
	s.expectLeading(t, s.a, true)
	s.expectLeading(t, s.b, false)
	eventually(t, "the node is Ready", func(ctx context.Context) (bool, string) {
		return conditionIs(stored(ctx, t, name), corev1.NodeReady, corev1.ConditionTrue)
	})
	addAdminTaint(t.Context(), t, name)

	// Every version of the node from now on: Ready must stay True.
	w, err := client.CoreV1().Nodes().Watch(t.Context(), metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: stored(t.Context(), t, name).ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && ev.Type == watch.Modified {
				if ok, why := conditionIs(n, corev1.NodeReady, corev1.ConditionTrue); !ok {
					s.notReady = append(s.notReady, n.ResourceVersion+": "+why)
				}
			}
		}
	}()
	s.stopWatch = func() { w.Stop(); <-watched }
	t.Cleanup(s.stopWatch)

	s.flap(t, "replica-a")
	s.plugin.mu.Lock()
	s.plugin.failNext = 2
	s.plugin.mu.Unlock()
	eventually(t, "nothing lost before the leader goes", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, true) })
	return s
}

// flap has the plugin add a second taint and take it away, and waits
// until the node shows both.
func (s *takeover) flap(t *testing.T, leader string) {
	t.Helper()
	flapped := strings.Replace(goodReply, `"taints":[`, `"taints":[{"key":"vendor.example.com/flap","value":"x","effect":"NoSchedule"},`, 1)
	hasFlap := func(ctx context.Context) bool { return taintSet(stored(ctx, t, s.name))[flappingTaint] }
	s.plugin.reply(http.StatusOK, flapped, 0)
	eventually(t, leader+" stores the flapping taint", func(ctx context.Context) (bool, string) { return hasFlap(ctx), "not yet" })
	s.plugin.reply(http.StatusOK, goodReply, 0)
	eventually(t, leader+" removes the flapping taint", func(ctx context.Context) (bool, string) { return !hasFlap(ctx), "not yet" })
}

// awaitLeader waits until id holds the leader election Lease, and returns
// when it saw it.
func (s *takeover) awaitLeader(t *testing.T, id string, limit time.Duration) time.Time {
	t.Helper()
	var at time.Time
	within(t, limit, id+" leads", func(ctx context.Context) (bool, string) {
		holder := leaseHolder(ctx, testElectionNS, s.lease)
		at = time.Now()
		return holder == id, "holder " + holder
	})
	return at
}

// takeoverLimit is how long after its leader's last renewal a standby may
// take the Lease. What it proves: the standby takes over by the lease
// running out, and no later, not at some slower path's pace (the test's
// own limit is 20 s). It must have seen the Lease unrenewed for its
// duration (2 s), and it looks every retry period, which client-go's
// jitter stretches to up to (1+JitterFactor) times (1.1 s), so it may see
// the last renewal one such period late and take the Lease one such
// period late: 4.2 s. The slack, 1.5 s, is for what that leaves out and a
// loaded machine stretches: the test's polling (50 ms), the API server's
// answers, and the scheduling of three processes and the control plane
// under -race on 2 cores, where a few hundred milliseconds were seen to
// go missing.
func takeoverLimit() time.Duration {
	return testElectionLease + 2*time.Duration((1+leaderelection.JitterFactor)*float64(testElectionRetry)) + 1500*time.Millisecond
}

// finish checks, after replica-b took over from replica-a that ended at
// stopped: replica-b's pings reach the node, nothing is lost, Ready never
// left True, no write was refused but for a retried conflict, and every
// node write of replica-a came before it ended and before any of
// replica-b. It returns when replica-b first wrote.
func (s *takeover) finish(t *testing.T, stopped time.Time) time.Time {
	t.Helper()
	s.flap(t, replicaB)
	s.expectLeading(t, s.b, true)
	eventually(t, "nothing lost after the takeover", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, s.name, true) })
	s.stopWatch()
	for _, why := range s.notReady {
		t.Errorf("Ready left True: %s", why)
	}
	var lastA, firstB time.Time
	var countA, countB int
	for _, w := range s.writes.all() {
		if w.status >= 400 && w.status != http.StatusConflict {
			t.Errorf("write refused: %s", w)
		}
		if !nodeWrite(w, s.name) {
			continue
		}
		switch w.replica {
		case replicaA:
			countA++
			lastA = w.at
			if w.at.After(stopped) {
				t.Errorf("replica-a wrote after it stopped: %s", w)
			}
		case replicaB:
			countB++
			if firstB.IsZero() {
				firstB = w.at
			}
		}
	}
	if countA == 0 || countB == 0 {
		t.Fatalf("node writes: %d by replica-a, %d by replica-b; want some by both", countA, countB)
	}
	if !firstB.After(lastA) {
		t.Errorf("replica-b first wrote at %s, replica-a last at %s: both wrote at once", stamp(firstB), stamp(lastA))
	}
	t.Logf("node writes: %d by replica-a until %s, stopped at %s; %d by replica-b from %s",
		countA, stamp(lastA), stamp(stopped), countB, stamp(firstB))
	if t.Failed() {
		for _, w := range s.writes.all() {
			t.Log(w)
		}
		t.Logf("replica-b's log:\n%s", s.b.tail(40))
	}
	return firstB
}

// expectLeading scrapes the metrics of replica p, and checks that they
// say it leads or not, and that it pinged the plugin or not; and that its
// probes say it lives and is ready: as the leader, its node runs; on
// standby, it read the Lease the leader holds.
func (s *takeover) expectLeading(t *testing.T, p *providerProcess, leads bool) {
	t.Helper()
	var url string
	eventually(t, "the replica serves its metrics", func(context.Context) (bool, string) {
		_, after, ok := strings.Cut(p.tail(1000), `msg="serving metrics" url=`)
		url, _, _ = strings.Cut(after, "\n")
		return ok, "not yet"
	})
	want := 0.0
	if leads {
		want = 1
	}
	eventually(t, "the replica's metrics", func(context.Context) (bool, string) {
		got := scrapeMetrics(t, url)
		leader, _ := got.value("pingnode_leader")
		pings, _ := got.value("pingnode_pings_total", "node", s.name)
		return leader == want && (pings > 0) == leads, fmt.Sprintf("pingnode_leader %g, %g pings", leader, pings)
	})
	base := strings.TrimSuffix(url, "/metrics")
	for _, probe := range []string{"/healthz", "/readyz"} {
		eventually(t, "the replica's "+probe, func(ctx context.Context) (bool, string) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+probe, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return false, err.Error()
			}
			defer func() { _ = resp.Body.Close() }()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode == http.StatusOK, resp.Status + ": " + string(body)
		})
	}
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }

// TestLeaderTakeover: the leader of two replicas is SIGKILLed; the
// standby leads within the takeover limit and carries on from the node as
// stored (see takeover.finish for what is checked).
func TestLeaderTakeover(t *testing.T) {
	needsControlPlane(t)
	s := startTakeover(t, "vk-takeover", testElectionLease)
	killed := time.Now()
	s.a.kill(t)
	led := s.awaitLeader(t, replicaB, 20*time.Second)
	if took := led.Sub(killed); took > takeoverLimit() {
		t.Errorf("replica-b led %s after the kill, want within %s", took, takeoverLimit())
	} else {
		t.Logf("replica-b led %s after replica-a was killed", took)
	}
	if first := s.finish(t, killed); !first.After(killed) {
		t.Errorf("replica-b first wrote at %s, before replica-a was killed at %s", stamp(first), stamp(killed))
	}
}

// TestLeaderStepsDown: the leader's API connection is cut (its proxy
// closes every request's connection). It cannot renew the Lease, and
// exits at the renew deadline, before the standby can take the Lease;
// the standby then leads and carries on (see takeover.finish).
func TestLeaderStepsDown(t *testing.T) {
	needsControlPlane(t)
	s := startTakeover(t, "vk-step-down", testElectionLease)
	cut := time.Now()
	s.proxyA.cut.Store(true)
	var exited time.Time
	select {
	case <-s.a.done:
		exited = time.Now()
	case <-time.After(10 * time.Second):
		t.Fatalf("replica-a still runs 10s after its API connection was cut:\n%s", s.a.tail(20))
	}
	// What the bound proves: replica-a stops at its renew deadline (its
	// last renewal was before the cut; the watchdog looks every quarter
	// retry period), not when something else ends it: this test's limit
	// above is 10 s. That it stops before replica-b writes is proven by
	// the order of their writes (finish). The slack, 2 s, is for the
	// process's exit and this test's noticing it under -race on 2 cores.
	if took := exited.Sub(cut); took > testElectionRenew+2*time.Second {
		t.Errorf("replica-a exited %s after the cut, want within the renew deadline %s", took, testElectionRenew)
	}
	if log := s.a.tail(10); !strings.Contains(log, "not renewed within the renew deadline") && !strings.Contains(log, "leader election lost") {
		t.Errorf("replica-a's log does not say why it stopped:\n%s", log)
	}
	led := s.awaitLeader(t, replicaB, 20*time.Second)
	t.Logf("replica-a exited %s after the cut; replica-b led %s after the cut", exited.Sub(cut), led.Sub(cut))
	if first := s.finish(t, exited); !first.After(exited) {
		t.Errorf("replica-b first wrote at %s, before replica-a exited at %s", stamp(first), stamp(exited))
	}
}

// TestLeaderReleasesOnSIGTERM: a leader told to stop (SIGTERM) stops its
// node controller, then releases the Lease, and exits with status 0; the
// standby takes the Lease at its next try, without waiting for the lease
// to run out, and writes only after the last write of the leader.
func TestLeaderReleasesOnSIGTERM(t *testing.T) {
	needsControlPlane(t)
	// A long lease: were the Lease not released, the standby would wait
	// for it to run out, at least 5s less one jittered retry period.
	s := startTakeover(t, "vk-release", 5*time.Second)
	signaled := time.Now()
	if err := s.a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var exited time.Time
	select {
	case <-s.a.done:
		exited = time.Now()
	case <-time.After(10 * time.Second):
		t.Fatalf("replica-a still runs 10s after SIGTERM:\n%s", s.a.tail(20))
	}
	if code := s.a.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("replica-a exited with status %d, want 0:\n%s", code, s.a.tail(20))
	}
	led := s.awaitLeader(t, replicaB, 20*time.Second)
	// The release is replica-a's last write of the Lease.
	var released time.Time
	for _, w := range s.writes.all() {
		if w.replica == replicaA && strings.HasSuffix(w.path, "/leases/"+s.lease) && w.at.After(signaled) {
			released = w.at
		}
	}
	// What the bound proves: replica-b did not wait for the lease to run
	// out. Had replica-a not released it, replica-b would take it no
	// sooner than the lease (5 s) after the last renewal it saw, which is
	// at most one jittered retry period (1.1 s) before the release: 3.9 s
	// after it. It takes a released Lease at its next try, within one
	// jittered retry period; the slack, 2 s, for a loaded machine, keeps
	// the limit (3.1 s) below 3.9 s.
	limit := time.Duration((1+leaderelection.JitterFactor)*float64(testElectionRetry)) + 2*time.Second
	switch took := led.Sub(released); {
	case released.IsZero():
		t.Error("replica-a did not release the Lease after SIGTERM")
	case took > limit:
		t.Errorf("replica-b led %s after the release, want within one retry period %s", took, limit)
	default:
		t.Logf("replica-a released the Lease %s after SIGTERM; replica-b led %s after that", released.Sub(signaled), took)
	}
	s.finish(t, exited)
}
