package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// The scheduler and the controller manager are run through their Setup,
// Config and Run functions rather than their cobra commands: the commands
// install the process's one signal handler, which the API server's command
// already owns, and apply logging flags a second time.

// startScheduler starts kube-scheduler with leader election off, serving
// its health checks on a free port of 127.0.0.1, and reports that port.
// It stops when ctx ends; its result then arrives on exits.
func startScheduler(ctx context.Context, dir, kubeconfig string, exits chan<- exit) (int, error) {
	// A configuration file, because the flag --kubeconfig is deprecated in
	// its favour; leader election is turned off there too.
	config, err := json.Marshal(map[string]any{
		"apiVersion":       "kubescheduler.config.k8s.io/v1",
		"kind":             "KubeSchedulerConfiguration",
		"clientConnection": map[string]any{"kubeconfig": kubeconfig},
		"leaderElection":   map[string]any{"leaderElect": false},
	})
	if err != nil {
		return 0, err
	}
	configFile := filepath.Join(dir, "kube-scheduler.json")
	if err := os.WriteFile(configFile, config, 0o600); err != nil {
		return 0, err
	}

	opts := scheduleroptions.NewOptions()
	if err := parseFlags(opts.Flags, []string{
		"--config=" + configFile,
		// Requests to its /readyz carry the token; the API server reviews
		// it. There are no client certificates to trust: skip looking up
		// their authority in kube-system, which would only log errors.
		"--authentication-kubeconfig=" + kubeconfig,
		"--authentication-skip-lookup",
		"--authorization-kubeconfig=" + kubeconfig,
	}); err != nil {
		return 0, err
	}
	port, err := listenLoopback(&opts.SecureServing.Listener, &opts.SecureServing.BindPort)
	if err != nil {
		return 0, err
	}
	cc, sched, err := schedulerapp.Setup(ctx, opts)
	if err != nil {
		return 0, err
	}
	go func() {
		err := schedulerapp.Run(ctx, cc, sched)
		if ctx.Err() != nil {
			err = nil // Run returns an error even when it stops as asked
		}
		exits <- exit{"kube-scheduler", err}
	}()
	return port, nil
}

// Controllers are the kube-controller-manager controllers testenv runs.
var Controllers = []string{
	// Adds and lifts the node.kubernetes.io/not-ready and .../unreachable
	// taints as a node's Ready condition turns False, Unknown or True.
	"node-lifecycle-controller",
	// Deletes the Pods on a node with a NoExecute taint they do not
	// tolerate, at once or after their tolerationSeconds; since 1.29 a
	// controller of its own, no longer part of the node lifecycle one.
	"taint-eviction-controller",
	// Deletes an object whose owners (its ownerReferences) are all gone,
	// such as the Lease in kube-node-lease of a deleted Node.
	"garbage-collector-controller",
	// Creates the "default" ServiceAccount in every namespace, which the
	// API server's ServiceAccount admission requires of every Pod.
	"serviceaccount-controller",
	// Publishes the ConfigMap kube-root-ca.crt in every namespace, which
	// the projected volume that ServiceAccount admission gives every Pod
	// mounts (its ca.crt): the API server's own certificates, here
	// (--root-ca-file).
	"root-ca-certificate-publisher-controller",
	// Creates the ResourceClaim of a Pod's claim made from a
	// ResourceClaimTemplate (owned by the Pod, named in its
	// status.resourceClaimStatuses), and takes a claim's reservation for a
	// Pod that is gone, so that its devices can be allocated again.
	"resourceclaim-controller",
	// Deletes the Pods whose allocated claims hold a device with a
	// NoExecute taint (in its ResourceSlice, or by a DeviceTaintRule) that
	// the claim's request does not tolerate, at once or after its
	// tolerationSeconds (KEP-5055, Dynamic Resource Allocation's version
	// of the taint eviction controller).
	"device-taint-eviction-controller",
	// Runs a Job's pods until its completions succeed: it creates them,
	// counts those whose phase is Succeeded, and marks the Job Complete.
	"job-controller",
}

// startControllerManager starts kube-controller-manager with leader
// election off and only [Controllers], serving its health checks on a free
// port of 127.0.0.1, and reports that port. It stops when ctx ends; its
// result then arrives on exits.
func startControllerManager(ctx context.Context, kubeconfig string, exits chan<- exit) (int, error) {
	opts, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return 0, err
	}
	all, disabled, aliases := kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()
	flags := opts.Flags(all, disabled, aliases)
	opts.ParsedFlags = &flags
	if err := parseFlags(&flags, []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig, // as for the scheduler
		"--authentication-skip-lookup",
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--root-ca-file=" + filepath.Join(filepath.Dir(kubeconfig), "certs", "apiserver.crt"),
		"--controllers=" + strings.Join(Controllers, ","),
		// The node lifecycle controller looks at every node's health
		// every second instead of every 5s, so that tests wait less for
		// a node turning Unknown or for its NoExecute taints. The grace
		// period before a silent node turns Unknown (50s) stays as in a
		// real cluster: a Virtual Kubelet renews its lease every 10s, and
		// NoSchedule taints follow conditions at once, without a period.
		"--node-monitor-period=1s",
		// The NoExecute taint goes on a node that is not Ready at the
		// next pass of the tainting loop (each 100ms, one node a pass: its
		// token bucket holds one), instead of one node each 10s. In a real
		// cluster that limit spreads out the eviction of many failing
		// nodes; here tests turn nodes NotReady seconds apart, and an
		// eviction test should not wait behind earlier tests' nodes. The
		// zone rules (see the package comment) still hold.
		"--node-eviction-rate=10",
	}); err != nil {
		return 0, err
	}
	port, err := listenLoopback(&opts.SecureServing.Listener, &opts.SecureServing.BindPort)
	if err != nil {
		return 0, err
	}
	config, err := opts.Config(ctx, all, disabled, aliases)
	if err != nil {
		return 0, err
	}
	go func() { exits <- exit{"kube-controller-manager", kcmapp.Run(ctx, config.Complete())} }()
	return port, nil
}

// parseFlags parses args into the flag sets of a component's options.
func parseFlags(sets *cliflag.NamedFlagSets, args []string) error {
	fs := pflag.NewFlagSet("testenv", pflag.ContinueOnError)
	for _, name := range sets.Order {
		fs.AddFlagSet(sets.FlagSets[name])
	}
	return fs.Parse(args)
}

// listenLoopback opens a listener on a free port of 127.0.0.1 and stores it
// and its port, for a component to serve on. Handing over an open listener
// leaves no window in which another process could take the port.
func listenLoopback(listener *net.Listener, port *int) (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	*listener, *port = l, l.Addr().(*net.TCPAddr).Port
	return *port, nil
}

// loopbackURL is the https URL of path on a port of 127.0.0.1.
func loopbackURL(port int, path string) string {
	return "https://127.0.0.1:" + strconv.Itoa(port) + path
}
