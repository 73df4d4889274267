package election

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/setting"
)

// testElection is an election whose timings are short enough for a unit
// test, and that client-go accepts.
func testElection() Election {
	return Election{
		Namespace: "default", Name: "pingnode-test", Identity: "replica-a",
		LeaseDuration: time.Second, RenewDeadline: 600 * time.Millisecond, RetryPeriod: 100 * time.Millisecond,
	}
}

func TestCheck(t *testing.T) {
	if err := testElection().Check(); err != nil {
		t.Fatalf("a good election: %v", err)
	}
	defaults := testElection()
	defaults.LeaseDuration, defaults.RenewDeadline, defaults.RetryPeriod = DefaultLease, DefaultRenewDeadline, DefaultRetryPeriod
	if err := defaults.Check(); err != nil {
		t.Fatalf("the default timings: %v", err)
	}
	for _, tt := range []struct {
		setting string
		change  func(*Election)
	}{
		{"Namespace", func(e *Election) { e.Namespace = "Kube_System" }},
		{"Name", func(e *Election) { e.Name = "my lease" }},
		{"Identity", func(e *Election) { e.Identity = "" }},
		{"LeaseDuration", func(e *Election) { e.LeaseDuration = 0 }},
		{"RenewDeadline", func(e *Election) { e.RenewDeadline = e.LeaseDuration }},
		{"RetryPeriod", func(e *Election) { e.RetryPeriod = 0 }},
		// client-go's elector refuses a renew deadline of 1.2 retry
		// periods or less.
		{"RetryPeriod", func(e *Election) { e.RetryPeriod = 500 * time.Millisecond }},
	} {
		e := testElection()
		tt.change(&e)
		var s *setting.Error
		if err := e.Check(); !errors.As(err, &s) || s.Setting != tt.setting {
			t.Errorf("%+v: %v, want a *setting.Error of %s", e, err, tt.setting)
		}
	}
}

// leader is the process's pingnode_leader.
func leader(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "pingnode_leader" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no pingnode_leader")
	return 0
}

// holder is the Lease's holder, or "" when it was released.
func holder(t *testing.T, client *fake.Clientset, e Election) string {
	t.Helper()
	lease, err := client.CoordinationV1().Leases(e.Namespace).Get(context.Background(), e.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// within waits up to limit for ok.
func within(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, limit)
		}
	}
}

// start runs Lead in the background, with work that runs until its
// context ends; it returns the channel work's start is told on, and the
// channel Lead's error comes on.
func start(ctx context.Context, t *testing.T, client *fake.Clientset, e Election, m *metrics.Metrics, lost func()) (<-chan struct{}, <-chan error) {
	t.Helper()
	working, done := make(chan struct{}), make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		done <- e.Lead(ctx, client, m, log, lost, func(ctx context.Context) error {
			close(working)
			<-ctx.Done()
			return nil
		})
	}()
	return working, done
}

// TestLeadReleases: a replica alone takes the Lease, runs its work while
// it leads, and, its context ended, stops the work and releases the
// Lease.
func TestLeadReleases(t *testing.T) {
	client := fake.NewClientset()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Expect(0, true)
	e := testElection()
	ctx, cancel := context.WithCancel(context.Background())
	working, done := start(ctx, t, client, e, m, func() { t.Error("lost a lead it holds") })
	select {
	case <-working:
	case <-time.After(5 * time.Second):
		t.Fatal("it did not lead within 5s")
	}
	if got := holder(t, client, e); got != e.Identity {
		t.Errorf("the Lease's holder %q, want %q", got, e.Identity)
	}
	if got := leader(t, reg); got != 1 {
		t.Errorf("pingnode_leader %g while it leads, want 1", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Lead: %v", err)
	}
	if got := holder(t, client, e); got != "" {
		t.Errorf("the Lease's holder %q once it stopped, want none: released", got)
	}
	if got := leader(t, reg); got != 0 {
		t.Errorf("pingnode_leader %g once it stopped, want 0", got)
	}
}

// TestLeadStandsBy: a replica that finds the Lease held by another stands
// by: it runs no work, writes nothing, and is ready once it has read the
// Lease; one refused the read is not.
func TestLeadStandsBy(t *testing.T) {
	for _, refused := range []bool{false, true} {
		e := testElection()
		other, now := "replica-b", metav1.NewMicroTime(time.Now())
		seconds := int32(60)
		client := fake.NewClientset(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: &other, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now,
			},
		})
		var gets atomic.Int32
		client.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
			gets.Add(1)
			if refused {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, e.Name, errors.New("no"))
			}
			return false, nil, nil
		})
		var writes atomic.Int32
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			client.PrependReactor(verb, "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
				writes.Add(1)
				return false, nil, nil
			})
		}
		m := metrics.New(prometheus.NewRegistry())
		m.Expect(0, true)
		ctx, cancel := context.WithCancel(context.Background())
		working, done := start(ctx, t, client, e, m, func() { t.Error("lost a lead it never had") })
		within(t, 5*time.Second, "two tries at the Lease", func() bool { return gets.Load() >= 2 })
		if ready, why := m.Ready(); ready == refused {
			t.Errorf("refused %v: ready %v (%s)", refused, ready, why)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Lead: %v", err)
		}
		select {
		case <-working:
			t.Errorf("refused %v: it worked on standby", refused)
		default:
		}
		if n := writes.Load(); n != 0 {
			t.Errorf("refused %v: %d writes of the Lease on standby, want none", refused, n)
		}
	}
}

// TestLeadLost: a leader whose renewals are refused is told it lost the
// Lease, and its work is stopped.
func TestLeadLost(t *testing.T) {
	client := fake.NewClientset()
	m := metrics.New(prometheus.NewRegistry())
	m.Expect(0, true)
	e := testElection()
	// The fake's reactors may not be added while it serves.
	var cut atomic.Bool
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if cut.Load() {
			return true, nil, apierrors.NewServiceUnavailable("cut")
		}
		return false, nil, nil
	})
	lost := make(chan struct{}, 4) // the watchdog, then perhaps the elector
	working, done := start(context.Background(), t, client, e, m, func() { lost <- struct{}{} })
	select {
	case <-working:
	case <-time.After(5 * time.Second):
		t.Fatal("it did not lead within 5s")
	}
	// How soon it is told is the elector's renew deadline, a matter of
	// time, which the end-to-end tests take with a control plane; here,
	// that it is told, and stops.
	cut.Store(true)
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("not lost within 5s")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Lead: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Lead still runs 5s after it lost the Lease")
	}
}
