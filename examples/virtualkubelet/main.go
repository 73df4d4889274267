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

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/election"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/rights"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
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
	configs, e, err := f.settings(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return 2
	}
	if f.printRBAC || f.printPolicy {
		return printAccess(f.access(configs, e), f.printRBAC, f.printPolicy, stdout, stderr)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if err := run(f.kubeconfig, f.metricsAddr, &f.kubelet, e, configs, log); err != nil {
		log.Error("provider stopped", "error", err)
		return 1
	}
	return 0
}

// run runs the providers until SIGINT or SIGTERM (see runProviders). With
// an election e, it runs them only while this replica leads. With a
// metrics address, the providers' metrics are served there; with a
// kubelet address, their pods' logs (every replica serves them).
func run(kubeconfig, metricsAddr string, kubelet *kubeletFlags, e *election.Election, configs []vnode.Config, log *slog.Logger) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	reg, all := metrics.NewRegistry()
	all.Expect(len(configs), e != nil)
	for i := range configs {
		configs[i].Metrics = all
	}
	if metricsAddr != "" {
		server, addr, err := metrics.Serve(metricsAddr, reg, all, log)
		if err != nil {
			return fmt.Errorf("-metrics-addr: %w", err)
		}
		defer func() { _ = server.Close() }()
		log.Info("serving metrics", "url", "http://"+addr+"/metrics")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	if err := kubelet.serve(ctx, client, configs, log); err != nil {
		return err
	}
	work := func(ctx context.Context) error { return runProviders(ctx, restConfig, configs, log) }
	if e == nil {
		all.SetLeader(true) // the only replica
		return work(ctx)
	}
	lost := func() { os.Exit(1) } // at once: no write after the renew deadline
	return e.Lead(ctx, client, all, log, lost, work)
}

// printAccess prints the RBAC objects of a, its admission policy, or both,
// and returns the exit status.
func printAccess(a rights.Access, rbac, policy bool, stdout, stderr io.Writer) int {
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
