// Command virtualkubelet is a Virtual Kubelet provider built on pingnode:
// it registers a virtual node, pings a plugin, and keeps the node's
// capacity, allocatable and taints true to the plugin's replies.
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -plugin http://127.0.0.1:4000/status
//
// One process can run a fleet of virtual nodes, each with its own node
// controller, Lease and plugin URL, to measure what many cost:
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -nodes 100 -node 'pingnode-virtual-{i}' -plugin 'http://127.0.0.1:4000/status/{i}'
//
// Several replicas can run for the same nodes: with -leader-elect they
// elect a leader with a Lease (see leader.go), and only the leader runs
// the node controllers and pings. With -metrics-addr, each serves its
// Prometheus metrics (see metrics.go):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -leader-elect -leader-elect-id a -metrics-addr 127.0.0.1:9101
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -leader-elect -leader-elect-id b -metrics-addr 127.0.0.1:9102
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pingnode/pingnode/nodeapply"
)

// StaticTaintKey is the taint of this provider's static configuration.
const StaticTaintKey = "virtual-node.example.com/site"

// StaticNode is the node as this provider registers it.
func StaticNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("100"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"type":                   "virtual-kubelet",
				"kubernetes.io/role":     "agent",
				"kubernetes.io/hostname": name,
			},
		},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: nodeapply.DefaultProtectedKey, Value: "true", Effect: corev1.TaintEffectNoSchedule},
			{Key: StaticTaintKey, Value: "remote", Effect: corev1.TaintEffectNoSchedule},
		}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			// No conditions: the first ping, right after registration,
			// sets Ready, the connectivity condition and the three
			// pressure conditions, with true times.
			NodeInfo: corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "virtual-kubelet", KubeletVersion: "v1.37.2"},
		},
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	nodes := flag.Int("nodes", 1, "how many virtual nodes to run, each with its own node controller, Lease and plugin URL: "+Index+" in -node (required with more than one) and in -plugin is the node's index, from 0")
	name := flag.String("node", "pingnode-virtual", "node name")
	plugin := flag.String("plugin", "http://127.0.0.1:4000/status", "the plugin's status URL")
	interval := flag.Duration("interval", 5*time.Second, "how often to ping the plugin")
	timeout := flag.Duration("timeout", 3*time.Second, "how long one ping may take")
	statusReport := flag.Duration("status-report", DefaultStatusReport, "how often the status of a steady node is written (a change is written at once); the first report after a start or a change moves by a random shift of up to half of it")
	leaseDuration := flag.Duration("lease-duration", DefaultLeaseDuration, "the duration of the node's Lease in kube-node-lease, whole seconds")
	leaseRenew := flag.Duration("lease-renew", 0, "how often the Lease is renewed (0: a quarter of -lease-duration)")
	compat := flag.Bool("compat", false, "interLink 0.6.2's taint rule: replace every taint but the protected ones")
	grace := flag.Duration("grace", nodeapply.DefaultGrace, "how long the plugin may fail to answer before the node is not Ready")
	connectivity := flag.String("connectivity-condition", string(nodeapply.DefaultConnectivityCondition), "the type of the condition that says whether the plugin answered its last ping")
	countHeld := flag.Bool("held", true, "read the plugin's figures as available now, and add what this node's running pods hold")
	metricsAddr := flag.String("metrics-addr", "", "the address to serve Prometheus metrics on, at /metrics (host:port); empty: none")
	leaderElect := flag.Bool("leader-elect", false, "elect a leader among replicas with a Lease: only the leader runs the node controllers and pings")
	electNamespace := flag.String("leader-elect-namespace", metav1.NamespaceDefault, "the namespace of the leader election Lease")
	electName := flag.String("leader-elect-name", "", "the name of the leader election Lease (empty: pingnode- and the -node pattern, "+Index+" read as fleet)")
	electID := flag.String("leader-elect-id", DefaultIdentity(), "this replica's identity in the Lease")
	electLease := flag.Duration("leader-elect-lease-duration", DefaultElectionLease, "how long a standby waits after the leader's last renewal before it takes over")
	electRenew := flag.Duration("leader-elect-renew-deadline", DefaultElectionRenewDeadline, "how long the leader tries to renew before it stops (it exits); less than the lease duration")
	electRetry := flag.Duration("leader-elect-retry-period", DefaultElectionRetry, "how often the leader renews and a standby tries to take over")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	configs, err := Fleet(*nodes, *name, *plugin, Config{
		StaticKeys: []string{StaticTaintKey}, Interval: *interval, Timeout: *timeout,
		StatusReport: *statusReport, LeaseDuration: *leaseDuration, LeaseRenew: *leaseRenew,
		Compat: *compat, Grace: *grace, ConnectivityCondition: corev1.NodeConditionType(*connectivity), CountHeld: *countHeld,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var election *Election
	if *leaderElect {
		lease := *electName
		if lease == "" {
			lease = "pingnode-" + strings.ReplaceAll(*name, Index, "fleet")
		}
		election = &Election{
			Namespace: *electNamespace, Name: lease, Identity: *electID,
			LeaseDuration: *electLease, RenewDeadline: *electRenew, RetryPeriod: *electRetry,
		}
	}
	if err := run(*kubeconfig, *metricsAddr, election, configs, log); err != nil {
		log.Error("provider stopped", "error", err)
		os.Exit(1)
	}
}

// run runs the providers until SIGINT or SIGTERM, or until one of them
// fails (see runProviders). With an election, it runs them only while
// this replica leads. With a metrics address, the providers' metrics are
// served there.
func run(kubeconfig, metricsAddr string, election *Election, configs []Config, log *slog.Logger) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	reg, metrics := NewRegistry()
	for i := range configs {
		configs[i].Metrics = metrics
	}
	if metricsAddr != "" {
		server, addr, err := serveMetrics(metricsAddr, reg, log)
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

// runProviders runs a provider for each configuration until ctx ends, or
// until one of them fails, which stops them all. Each node has its own
// client, so its own rate limit, as a kubelet has; client-go shares the
// connections of clients with the same configuration.
func runProviders(ctx context.Context, restConfig *rest.Config, configs []Config, log *slog.Logger) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for _, cfg := range configs {
		client, err := kubernetes.NewForConfig(restConfig)
		if err != nil {
			return err
		}
		nodeLog := log.With("node", cfg.Static.Name)
		nodeLog.Info("provider starting", "plugin", cfg.PluginURL)
		wg.Go(func() {
			if err := NewProvider(cfg, client, nodeLog).Run(ctx); err != nil && ctx.Err() == nil {
				cancel(fmt.Errorf("node %s: %w", cfg.Static.Name, err))
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
