package election

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/setting"
)

// Election is how replicas of the provider elect the one that runs the
// nodes and pings: client-go's leader election with a Lease.
// The timings default to kube-controller-manager's.
type Election struct {
	// Namespace and Name are the Lease's.
	Namespace, Name string
	// Identity names this replica in the Lease (holderIdentity).
	Identity string
	// LeaseDuration is how long a standby waits after the last renewal
	// it saw before it takes the lease; RenewDeadline is how long the
	// leader tries to renew before it gives up, and stops writing;
	// RetryPeriod is how often both try.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Kube-controller-manager's leader election timings, the defaults of an
// Election's LeaseDuration, RenewDeadline and RetryPeriod.
const (
	DefaultLease         = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// settingError is the error of a setting of an [Election] that cannot
// work, by its field's name, which the command line reports under the
// name of its flag, as it does the provider's own settings.
var settingError = setting.Errorf

// Check returns the first setting of e that cannot work, as a
// *setting.Error: client-go's elector refuses the same timings, and the
// Lease's names must be valid. The command line checks it at start, with
// or without -leader-elect, so that a mistake is found before a replica
// ever runs with it.
func (e Election) Check() error {
	switch {
	case len(validation.IsDNS1123Label(e.Namespace)) > 0:
		return settingError("Namespace", e.Namespace, "want a namespace: %s", strings.Join(validation.IsDNS1123Label(e.Namespace), "; "))
	case len(validation.IsDNS1123Subdomain(e.Name)) > 0:
		return settingError("Name", e.Name, "want a Lease name: %s", strings.Join(validation.IsDNS1123Subdomain(e.Name), "; "))
	case e.Identity == "":
		return settingError("Identity", e.Identity, "want this replica's identity")
	case e.LeaseDuration <= 0:
		return settingError("LeaseDuration", e.LeaseDuration, "want more than zero")
	case e.RenewDeadline <= 0 || e.RenewDeadline >= e.LeaseDuration:
		// The leader stops before a standby can take the Lease.
		return settingError("RenewDeadline", e.RenewDeadline, "want more than zero and less than the lease duration %s", e.LeaseDuration)
	case e.RetryPeriod <= 0 || e.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(e.RetryPeriod)):
		// client-go's elector refuses less: its tries are a retry
		// period apart, stretched at random by up to JitterFactor.
		return settingError("RetryPeriod", e.RetryPeriod, "want more than zero, and the renew deadline %s more than %g times it", e.RenewDeadline, leaderelection.JitterFactor)
	}
	return nil
}

// DefaultIdentity is the host name and the process id, unique among
// replicas on one host and across hosts.
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s_%d", host, os.Getpid())
}

// renewWatch is the Lease lock, with the time of its last successful
// write (an acquisition or a renewal) kept for the watchdog, and whether
// its last try reached the API server and was allowed, for /readyz: a
// read of the Lease some replica holds, or a write that was taken, or
// lost to another replica's. A read that finds no Lease says nothing yet:
// the write that follows does.
type renewWatch struct {
	resourcelock.Interface
	renewed atomic.Int64 // unix nanoseconds
	metrics *metrics.Metrics
}

func (r *renewWatch) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	ler, raw, err := r.Interface.Get(ctx)
	if !apierrors.IsNotFound(err) {
		r.metrics.ReachedElection(err == nil)
	}
	return ler, raw, err
}

func (r *renewWatch) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := r.Interface.Create(ctx, ler)
	if err == nil {
		r.renewed.Store(time.Now().UnixNano())
	}
	r.metrics.ReachedElection(err == nil || apierrors.IsAlreadyExists(err))
	return err
}

func (r *renewWatch) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := r.Interface.Update(ctx, ler)
	if err == nil {
		r.renewed.Store(time.Now().UnixNano())
	}
	r.metrics.ReachedElection(err == nil || apierrors.IsConflict(err))
	return err
}

// Lead waits until this replica holds the Lease, then runs work until ctx
// ends or work fails, and releases the Lease once work has returned.
// Standing by, it writes nothing but its attempts to take the Lease. It
// records in all whether this replica leads ([metrics.Metrics.SetLeader])
// and whether its last try at the Lease reached the API server
// ([metrics.Metrics.ReachedElection]), which /readyz reports on standby.
//
// A leader that cannot renew the Lease within the renew deadline calls
// lost at once, from a watchdog, while work may still run: lost must stop
// every write (main exits the process). The deadline is shorter than the
// lease, so the leader stops before a standby can take over. client-go's
// own elector would only cancel work's context after trying to release
// the Lease, which takes up to one more renew deadline.
func (e Election) Lead(ctx context.Context, client kubernetes.Interface, all *metrics.Metrics, log *slog.Logger, lost func(), work func(context.Context) error) error {
	lock := &renewWatch{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.Identity},
	}, metrics: all}
	// The elector's context ends when work has returned, or on ctx's end
	// before this replica leads; then it releases the Lease if held.
	electing, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	started, finished := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			select {
			case <-started: // work stops, then stops the elector
			default:
				stopElecting()
			}
		case <-electing.Done():
		}
	}()
	var workErr error
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: e.Name,
		LeaseDuration: e.LeaseDuration, RenewDeadline: e.RenewDeadline, RetryPeriod: e.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				close(started)
				defer close(finished)
				defer stopElecting()
				all.SetLeader(true)
				log.Info("leading", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
				working, stopWork := context.WithCancel(leading)
				defer stopWork()
				stopOnEnd := context.AfterFunc(ctx, stopWork)
				defer stopOnEnd()
				go watchRenewals(working, lock, e, log, lost)
				workErr = work(working)
			},
			OnStoppedLeading: func() {
				all.SetLeader(false)
				if electing.Err() == nil { // the elector gave up renewing
					log.Error("leader election lost", "identity", e.Identity)
					lost()
				}
			},
			OnNewLeader: func(identity string) {
				if identity != e.Identity {
					log.Info("standing by", "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	all.SetLeader(false)
	elector.Run(electing)
	if lock.renewed.Load() != 0 { // it led: work runs, or ran
		<-finished // work's context ended with the elector's run
	}
	return workErr
}

// watchRenewals calls lost when the lease has not been renewed for the
// renew deadline, until ctx ends.
func watchRenewals(ctx context.Context, lock *renewWatch, e Election, log *slog.Logger, lost func()) {
	ticker := time.NewTicker(max(e.RetryPeriod/4, 10*time.Millisecond))
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			since := now.Sub(time.Unix(0, lock.renewed.Load()))
			if since >= e.RenewDeadline && ctx.Err() == nil {
				log.Error("the lease was not renewed within the renew deadline; stopping at once", "since", since, "identity", e.Identity)
				lost()
				return
			}
		}
	}
}
