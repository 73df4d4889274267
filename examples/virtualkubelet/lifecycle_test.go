package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// startErrorLimit is how long Run may take to return a start that
// failed. The work is one refused connection (an API server that is not
// there: 3 to 10 ms measured under -race on 2 cores), or a read, a cache
// sync and a registration the API server refuses (20 to 50 ms there,
// the control plane busy beside it). Before, Run waited for its
// informers, which end only with its context: for good. A second is
// twenty times what was seen, for a machine loaded by other tests'
// leftovers and a garbage collection; it still tells "at once" from
// "for good", and from any wait on the informers' backoff.
const startErrorLimit = time.Second

// runOnce runs a provider's Run until it returns, for at most a minute,
// and returns how long it took and its error.
func runOnce(t *testing.T, p *vnode.Node) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- p.Run(ctx) }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(time.Minute):
	}
	cancel() // Run must end with its context, at least
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return 30 s after its context ended")
		return 0, nil
	}
}

// testConfig is the configuration of a node whose plugin answers at url.
func testConfig(name, url string) vnode.Config {
	return vnode.Config{
		Static: vnode.StaticNode(name), StaticKeys: []string{vnode.StaticTaintKey}, PluginURL: url,
		Interval: 50 * time.Millisecond, Timeout: 500 * time.Millisecond, StatusReport: time.Hour,
	}
}

// TestStartErrorReturns: a start that fails returns from Run at once,
// with the error, whether the API server cannot be reached or refuses the
// node's registration (a real refusal, by an admission policy); nothing
// Run started is left waiting on its context, which is still live.
func TestStartErrorReturns(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "http://" + closed.Addr().String()
	_ = closed.Close()
	log := slog.New(slog.NewTextHandler(t.Output(), nil))

	t.Run("API server unreachable", func(t *testing.T) {
		c, err := kubernetes.NewForConfig(&rest.Config{Host: unreachable})
		if err != nil {
			t.Fatal(err)
		}
		took, err := runOnce(t, vnode.New(testConfig("vk-start-unreachable", "http://127.0.0.1:1/status"), c, log))
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Run: %v, want the connection refused", err)
		}
		if took > startErrorLimit {
			t.Errorf("Run returned after %s, want within %s", took, startErrorLimit)
		}
		t.Logf("%s: %v", took, err)
	})

	t.Run("registration refused", func(t *testing.T) {
		needsControlPlane(t)
		const name = "vk-start-refused"
		refuseRegistration(t, name)
		t.Cleanup(func() { deleteNode(t, name) })
		cfg := testConfig(name, "http://127.0.0.1:1/status")
		id := grant(t, name, accessFor("", "", []vnode.Config{cfg}, nil))
		took, err := runOnce(t, vnode.New(cfg, id.client, log))
		if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
			t.Errorf("Run: %v, want the API server's refusal", err)
		}
		if took > startErrorLimit {
			t.Errorf("Run returned after %s, want within %s", took, startErrorLimit)
		}
		if _, err := client.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the node: %v, want none", err)
		}
		t.Logf("%s: %v", took, err)
	})
}

// TestFleetOneNodeCannotStart: a fleet of two nodes, one of which the API
// server refuses to register (an admission policy). The other registers
// and keeps its node true to its plugin all along; the refused one is
// tried again and again, with backoff, each failure counted, and starts
// once the policy is gone. The fleet stops when its context ends.
func TestFleetOneNodeCannotStart(t *testing.T) {
	needsControlPlane(t)
	const good, refused = "vk-fleet-good", "vk-fleet-refused"
	policy := refuseRegistration(t, refused)
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, goodReply, 0)
	server := httptest.NewServer(plugin)
	t.Cleanup(server.Close)
	reg := prometheus.NewRegistry()
	all := metrics.New(reg)
	var configs []vnode.Config
	for _, name := range []string{good, refused} {
		cfg := testConfig(name, server.URL+"/status")
		cfg.Metrics = all
		cfg.StartRetry = wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 3, Cap: 400 * time.Millisecond}
		configs = append(configs, cfg)
	}
	// One ServiceAccount for the fleet, with the rights of both nodes.
	id := grant(t, good, accessFor("", "", configs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runProviders(ctx, id.config, configs, slog.New(slog.NewTextHandler(t.Output(), nil))) }()
	stopped := false
	stop := func() {
		t.Helper()
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("runProviders: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the fleet still runs 30 s after its context ended")
		}
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
		deleteNode(t, good)
		deleteNode(t, refused)
	})

	startErrors := func(name string) float64 {
		n, _ := gather(t, reg).value("pingnode_start_errors_total", "node", name)
		return n
	}
	eventually(t, "the good node runs", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, good, false) })
	eventually(t, "the refused node is tried again", func(context.Context) (bool, string) {
		n := startErrors(refused)
		return n >= 3, fmt.Sprintf("%g start errors so far", n)
	})
	if _, err := client.CoreV1().Nodes().Get(t.Context(), refused, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused node: %v, want none", err)
	}
	if n := startErrors(good); n != 0 {
		t.Errorf("the good node failed to start %g times", n)
	}
	eventually(t, "the good node still runs", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, good, false) })

	policy.remove()
	eventually(t, "the refused node starts, and runs, once allowed", func(ctx context.Context) (bool, string) {
		return nothingLost(ctx, t, refused, false)
	})
	stop()
}
