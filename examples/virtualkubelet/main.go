// Command virtualkubelet is a Virtual Kubelet provider built on pingnode:
// it registers a virtual node, pings a plugin, and keeps the node's
// capacity, allocatable and taints true to the plugin's replies.
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -plugin http://127.0.0.1:4000/status
//
// With -dra-driver it publishes the plugin's devices as Dynamic Resource
// Allocation devices, one pool of ResourceSlices a node (see devices.go),
// which the scheduler allocates to pods' claims:
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -dra-driver gpu.nvidia.com
//
// One process can run a fleet of virtual nodes, each with its own node
// controller, Lease and plugin URL ({i} in -plugin is the node's index,
// for a gateway that serves many; without it, one plugin serves all):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -nodes 100 -node 'pingnode-virtual-{i}'
//
// With -parts it serves its plugin's parts, the machines or partitions
// its reply lists, each as a node of its own named by the -node template,
// all from one ping of the plugin (see supervisor.go):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -parts -node 'slurm-{part}'
//
// Several replicas can run for the same nodes: with -leader-elect they
// elect a leader with a Lease (see leader.go), and only the leader runs
// the node controllers and pings. With -metrics-addr, each serves its
// Prometheus metrics (see metrics.go):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -leader-elect -leader-elect-id a -metrics-addr 127.0.0.1:9101
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -leader-elect -leader-elect-id b -metrics-addr 127.0.0.1:9102
//
// Its rights are data: -print-rbac prints the RBAC objects the
// configuration the other flags give needs, bound to -service-account
// (rbac.go), and -print-node-policy the admission policy that fences what
// RBAC cannot name (nodepolicy.go); deploy/ holds them, for a Deployment
// of two replicas:
//
//	go run . -service-account pingnode/pingnode-provider -leader-elect -print-rbac
//
// The files follow the provider's jobs: its configuration (config.go,
// flags.go), its lifecycle (lifecycle.go, fleet.go: start, retry, stop;
// one for a node and for its supervisor), the one ping loop
// (supervisor.go, source.go: a supervisor pings the plugin for its one
// node, or for every part's node), the step at each ping (ping.go,
// held.go, report.go), the nodes' Leases (internal/leases), its plugin's
// parts with -parts (parts.go, partnode.go), the delivery of what changed
// to the API server (delivery.go, handoff.go, statuswrite.go), its
// caches (cache.go, devicecache.go), the end of its pods' deletion
// (podfinish.go), its devices with -dra-driver (devices.go, publish.go,
// poddevices.go), what it tells people (events.go, metrics.go,
// health.go) and its rights (rbac.go, nodepolicy.go, partsrights.go);
// leader.go elects the replica that runs. README.md is the operator's
// guide.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() { os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr)) }

// runMain runs the provider with the command line's arguments, logging to
// stderr, and returns the process's exit status: 2 for a flag that
// cannot work, found before anything runs, as the flag package does for
// a flag it cannot parse; 1 when the provider cannot run (no kubeconfig,
// no metrics address); 0 when it stopped on SIGINT or SIGTERM. With
// -print-rbac or -print-node-policy it prints the provider's rights for
// the configuration the other flags give to stdout instead, and returns
// 0.
func runMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("virtualkubelet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := registerFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2 // the flag package said what and showed the usage
	}
	configs, election, err := f.settings(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return 2
	}
	if f.printRBAC || f.printPolicy {
		return printAccess(f.access(configs, election), f.printRBAC, f.printPolicy, stdout, stderr)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if err := run(f.kubeconfig, f.metricsAddr, election, configs, log); err != nil {
		log.Error("provider stopped", "error", err)
		return 1
	}
	return 0
}

// run runs the providers until SIGINT or SIGTERM (see runProviders). With
// an election, it runs them only while this replica leads. With a metrics
// address, the providers' metrics are served there.
func run(kubeconfig, metricsAddr string, election *Election, configs []Config, log *slog.Logger) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	reg, metrics := NewRegistry()
	metrics.Expect(len(configs), election != nil)
	for i := range configs {
		configs[i].Metrics = metrics
	}
	if metricsAddr != "" {
		server, addr, err := serveMetrics(metricsAddr, reg, metrics, log)
		if err != nil {
			return fmt.Errorf("-metrics-addr: %w", err)
		}
		defer func() { _ = server.Close() }()
		log.Info("serving metrics", "url", "http://"+addr+"/metrics")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work := func(ctx context.Context) error { return runProviders(ctx, restConfig, configs, log) }
	if election == nil {
		metrics.SetLeader(true) // the only replica
		return work(ctx)
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	lost := func() { os.Exit(1) } // at once: no write after the renew deadline
	return lead(ctx, client, *election, metrics, log, lost, work)
}

// printAccess prints the RBAC objects of a, its admission policy, or both,
// and returns the exit status.
func printAccess(a Access, rbac, policy bool, stdout, stderr io.Writer) int {
	var docs []func() ([]byte, error)
	if rbac {
		docs = append(docs, a.YAML)
	}
	if policy {
		docs = append(docs, a.PolicyYAML)
	}
	for _, doc := range docs {
		out, err := doc()
		if err == nil {
			_, err = stdout.Write(out)
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	return 0
}
