// Command template is the smallest Virtual Kubelet provider on pingnode, in
// the shape of k8s.io/sample-controller: one virtual node, kept true to its
// plugin's ping replies by one sync function run at each ping
// (controller.go), and the node's Lease, renewed as the kubelet renews it
// (lease.go). Copy it to start a provider of your own;
// examples/virtualkubelet is the reference provider with every feature.
//
//	go run ../plugin &
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig
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
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// config is what the flags say, checked.
type config struct {
	node      string        // -node
	pluginURL string        // -plugin-url
	interval  time.Duration // -ping-interval
	rest      *rest.Config  // from -kubeconfig
}

// timeout bounds one ping: 3 s, or 3/5 of the interval when that is less,
// so that a plugin that hangs fails its ping instead of stalling the loop.
func (c config) timeout() time.Duration { return min(3*time.Second, c.interval*3/5) }

// parseFlags reads the flags in args and checks each once. It writes to
// stderr why it refuses one, naming the flag, and returns an error: the
// command then exits with status 2, as the flag package does for a flag
// it cannot parse (and with 0 for -h, flag.ErrHelp).
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var kubeconfig string
	fs := flagSet(&c, &kubeconfig)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "kubeconfig" })
	if !given {
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	var problems []string
	refuse := func(name, problem string) { problems = append(problems, "invalid value for flag -"+name+": "+problem) }
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Sprintf("unexpected argument %q: every setting is a flag", fs.Arg(0)))
	}
	if errs := validation.IsDNS1123Subdomain(c.node); len(errs) > 0 {
		refuse("node", strings.Join(errs, "; "))
	}
	if _, err := newPlugin(c.pluginURL, 0, nil); err != nil {
		refuse("plugin-url", err.Error()) // never the URL, which may hold credentials
	}
	if c.interval <= 0 {
		refuse("ping-interval", c.interval.String()+": want more than zero")
	}
	var err error
	if kubeconfig == "" {
		if c.rest, err = rest.InClusterConfig(); err != nil {
			refuse("kubeconfig", "not given, and not in a cluster: "+err.Error())
		}
	} else if c.rest, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		refuse("kubeconfig", err.Error())
	}
	if len(problems) > 0 {
		fmt.Fprintln(stderr, strings.Join(problems, "\n"))
		return c, errors.New("invalid flags")
	}
	c.rest.UserAgent = "pingnode-template"
	c.rest.Timeout = 10 * time.Second // no request to the API server hangs the pings or the Lease
	return c, nil
}

// flagSet registers the flags, each described once: -help and the
// README's table (TestREADMEFlags) both say what it says.
func flagSet(c *config, kubeconfig *string) *flag.FlagSet {
	fs := flag.NewFlagSet("template", flag.ContinueOnError)
	fs.StringVar(kubeconfig, "kubeconfig", "", "the cluster's kubeconfig `file`; not given: $KUBECONFIG; empty: the in-cluster configuration")
	fs.StringVar(&c.node, "node", "pingnode-template", "the virtual node's `name`, a DNS subdomain")
	fs.StringVar(&c.pluginURL, "plugin-url", "http://127.0.0.1:4000/status", "the plugin's status `URL`: http://, https:// (verified with the system's CAs) or unix:///path/to/plugin.sock")
	fs.DurationVar(&c.interval, "ping-interval", 5*time.Second, "how often the plugin is pinged, more than zero; a ping may take 3s, or 3/5 of the interval when that is less")
	return fs
}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, slog.Default()); err != nil {
		slog.Error("cannot run", "err", err)
		os.Exit(1)
	}
}

// run keeps the node true to its plugin, and renews its Lease, until ctx
// is done. It returns an error only when it cannot start.
func run(ctx context.Context, c config, log *slog.Logger) error {
	client, err := kubernetes.NewForConfig(c.rest)
	if err != nil {
		return err
	}
	plugin, err := newPlugin(c.pluginURL, c.timeout(), time.Now)
	if err != nil {
		return err
	}
	ctrl := newController(client.CoreV1().Nodes(), c.node, plugin.ping, log)
	lease := newLeaseRenewer(client, c.node, time.Now, log)

	var wg sync.WaitGroup
	wg.Go(func() { wait.UntilWithContext(ctx, lease.renew, leaseRenew) })
	log.Info("pinging the plugin", "node", c.node, "every", c.interval)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := ctrl.sync(ctx); err != nil && ctx.Err() == nil {
			log.Error("sync failed; the next ping tries again", "node", c.node, "err", err)
		}
	}, c.interval)
	wg.Wait()
	log.Info("stopped", "node", c.node)
	return nil
}
