package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// Exit statuses.
const (
	exitOK       = 0
	exitWarnings = 1 // with -strict
	exitUsage    = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("pingcheck", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: pingcheck [flags] [reply-file|-]")
		flags.PrintDefaults()
	}
	nodeFile := flags.String("node", "", "apply the reply to this node (JSON, as kubectl get node -o json prints it)")
	output := flags.String("o", "text", "output: text, or json for the node after the reply")
	strict := flags.Bool("strict", false, "exit with status 1 when there is any warning")
	allowZero := flags.Bool("allow-zero", false, "accept 0 for cpu, memory and pods")
	protected := flags.String("protected", "", "comma-separated taint keys of the provider's own, besides "+pingstatus.DefaultProtectedKey)
	labelNamespaces := flags.String("label-namespaces", "", "comma-separated namespaces in which the plugin may set labels, each with its subdomains, like nvidia.com, besides "+strings.Join(pingstatus.DefaultLabelNamespaces(), " and ")+" (never unprefixed, kubernetes.io or k8s.io)")
	protectedLabels := flags.String("protected-labels", "", "comma-separated label keys the provider sets itself, which the plugin may not set")
	compat := flags.Bool("compat", false, "interLink 0.6.2's taint rule: replace every taint but the protected ones")
	at := flags.String("at", "", "the ping's time (RFC 3339): the conditions follow the ping")
	failed := flags.String("failed", "", "the plugin did not answer, for this reason (\"HTTP 503\", \"timeout after 10s\"); needs -at, reads no reply")
	grace := flags.Duration("grace", nodeapply.DefaultGrace, "how long the plugin may fail to answer before the node takes no new pods (0: at the first failed ping)")
	var unreachable nodeapply.Unreachable
	flags.TextVar(&unreachable, "unreachable", nodeapply.UnreachableNotReady, "what the node says once the plugin has not answered for the grace: NotReady (Ready False: running pods are evicted after their toleration) or NoSchedule (Ready stays True and the taint "+nodeapply.UnreachableTaintKey+":NoSchedule keeps new pods away: running pods stay)")
	notReadyAfter := flags.Duration("not-ready-after", 0, "with -unreachable NoSchedule: turn Ready False after all once the plugin has not answered for this long (0: never)")
	virtual := flags.Bool("virtual-node-conditions", false, "also set MemoryPressure, DiskPressure, PIDPressure and NetworkUnavailable False, as the example provider does (for a node another writer, such as interLink, left with them)")
	pluginURL := flags.String("url", "", "ping this plugin status endpoint (http://, https:// or unix:///path/to/plugin.sock), as the provider does, instead of reading a reply")
	timeout := flags.Duration("timeout", 10*time.Second, "with -url: how long one ping may take")
	watchMode := flags.Bool("watch", false, "with -url: ping every -interval and print what each ping changes")
	interval := flags.Duration("interval", 5*time.Second, "with -watch: the time between pings")
	count := flags.Int("count", 0, "with -watch: stop after this many pings (0: until interrupted)")
	driver := flags.String("dra-driver", "", "the Dynamic Resource Allocation driver the provider publishes devices as (its -dra-driver), such as gpu.nvidia.com: the device lines name a short attribute or capacity in its domain, as a claim's CEL reads it (empty: "+driverPlaceholder+")")
	var transport pingclient.Config // with -url: how the plugin is reached
	transport.AddFlags(flags, "")
	if err := flags.Parse(args); err != nil {
		return exitUsage
	}
	live := *pluginURL != ""
	if bad := usageProblem(flags, live, *watchMode, *interval, *timeout); bad != "" {
		fmt.Fprintln(stderr, "pingcheck:", bad)
		return exitUsage
	}
	if flags.NArg() > 1 || (*output != "text" && *output != "json") || (*failed != "" && (*at == "" || flags.NArg() > 0)) ||
		(live && (flags.NArg() > 0 || *failed != "" || *at != "")) || (*watchMode && !live) {
		flags.Usage()
		return exitUsage
	}
	ping := nodeapply.Ping{Failure: *failed}
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			fmt.Fprintln(stderr, "pingcheck: -at:", err)
			return exitUsage
		}
		ping.At = t
	}
	if *driver == "" {
		*driver = driverPlaceholder
	} else if p := driverProblem(*driver); p != "" {
		fmt.Fprintf(stderr, "pingcheck: -dra-driver: %q is not a driver name: %s\n", *driver, p)
		return exitUsage
	}
	keys, namespaces, labelKeys := commaList(*protected), commaList(*labelNamespaces), commaList(*protectedLabels)
	if bad := labelFlagsProblem(namespaces, labelKeys); bad != "" {
		fmt.Fprintln(stderr, "pingcheck:", bad)
		return exitUsage
	}
	switch {
	case *grace < 0:
		fmt.Fprintln(stderr, "pingcheck: -grace: want 0 (at the first failed ping) or more")
		return exitUsage
	case *notReadyAfter < 0 || *notReadyAfter > 0 && unreachable != nodeapply.UnreachableNoSchedule:
		fmt.Fprintln(stderr, "pingcheck: -not-ready-after: want 0 or more, with -unreachable NoSchedule")
		return exitUsage
	}
	opts := nodeapply.Options{
		Reply: pingstatus.Options{
			AllowZero: *allowZero, ProtectedKeys: keys, LabelNamespaces: namespaces, ProtectedLabels: labelKeys,
		},
		ReplaceAllTaints: *compat, Grace: *grace, NoGrace: *grace == 0,
		Unreachable: unreachable, NotReadyAfter: *notReadyAfter, VirtualNodeConditions: *virtual,
	}
	name := "-"
	if flags.NArg() == 1 {
		name = flags.Arg(0)
	}
	var body []byte
	if *failed == "" && !live {
		var err error
		if body, err = readInput(name, stdin, opts.Reply.ReadLimit()); err != nil {
			fmt.Fprintln(stderr, "pingcheck:", err)
			return exitUsage
		}
	}
	node := &corev1.Node{}
	if *nodeFile != "" {
		var err error
		if node, err = readNode(*nodeFile); err != nil {
			fmt.Fprintln(stderr, "pingcheck:", err)
			return exitUsage
		}
	}

	if live {
		transport.URL, transport.Timeout, transport.MaxBodyBytes = *pluginURL, *timeout, opts.Reply.MaxBodyBytes
		transport.Log = slog.New(slog.NewTextHandler(stderr, nil))
		if err := transport.Validate(); err != nil {
			fmt.Fprintln(stderr, "pingcheck:", err)
			return exitUsage
		}
		client, err := pingclient.New(transport)
		if err != nil {
			fmt.Fprintln(stderr, "pingcheck:", err)
			return exitUsage
		}
		defer client.Close()
		if *watchMode {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			return watch(ctx, stdout, client.Ping, node, *interval, *count, opts, *driver)
		}
		p, warnings := nodeapply.Judge(client.Ping(context.Background()), opts.Reply)
		res, pool := apply(node, nil, p, opts)
		parts, partWarnings := applyParts(node, p, opts)
		warnings = slices.Concat(warnings, res.Warnings, pool.Warnings, partWarnings)
		report(stdout, *pluginURL, len(p.Body), &p, warnings, res, nil, pool, *driver)
		if p.Reached() && p.Reply.ReplaceParts {
			reportParts(stdout, p.Reply, parts, nodeName(*nodeFile), *driver)
		}
		if *strict && (len(warnings) > 0 || !p.Reached()) {
			return exitWarnings
		}
		return exitOK
	}
	if ping.Reached() {
		ping.Body = body
	}
	ping, warnings := nodeapply.Judge(ping, opts.Reply)
	res, pool := apply(node, nil, ping, opts)
	parts, partWarnings := applyParts(node, ping, opts)
	warnings = slices.Concat(warnings, res.Warnings, pool.Warnings, partWarnings)

	if *output == "json" {
		var out []byte
		var err error
		if ping.Reached() && ping.Reply.ReplaceParts {
			out, err = json.MarshalIndent(partNodes(parts), "", "  ")
		} else {
			out, err = json.MarshalIndent(res.Node, "", "  ")
		}
		if err != nil {
			fmt.Fprintln(stderr, "pingcheck:", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "%s\n", out)
		for _, w := range warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
	} else {
		report(stdout, name, len(body), &ping, warnings, res, nil, pool, *driver)
		if ping.Reached() && ping.Reply.ReplaceParts {
			reportParts(stdout, ping.Reply, parts, nodeName(*nodeFile), *driver)
		}
	}
	if *strict && len(warnings) > 0 {
		return exitWarnings
	}
	return exitOK
}

// usageProblem returns what is wrong with flags that parsed, or "": the
// transport flags and -timeout need -url, and -watch needs an -interval
// and a -timeout above zero.
func usageProblem(flags *flag.FlagSet, live, watch bool, interval, timeout time.Duration) string {
	transportFlags := flag.NewFlagSet("", flag.ContinueOnError)
	new(pingclient.Config).AddFlags(transportFlags, "")
	problem := ""
	flags.Visit(func(f *flag.Flag) {
		if !live && problem == "" && (transportFlags.Lookup(f.Name) != nil || f.Name == "timeout") {
			problem = "-" + f.Name + ": only with -url"
		}
	})
	switch {
	case problem != "":
		return problem
	case live && timeout <= 0:
		return "-timeout: want more than 0"
	case watch && interval <= 0:
		return "-interval: want more than 0"
	}
	return ""
}

// commaList splits a comma-separated flag value; nil when it is empty.
func commaList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// labelFlagsProblem returns what is wrong with the values of
// -label-namespaces and -protected-labels, or "": each namespace must be
// one a provider may allow its plugin, and each protected key a label key.
func labelFlagsProblem(namespaces, protected []string) string {
	for _, ns := range namespaces {
		if p := kuberules.NamespaceProblem(ns); p != "" {
			return fmt.Sprintf("-label-namespaces: %q cannot be allowed: %s", ns, p)
		}
	}
	for _, key := range protected {
		if p := kuberules.QualifiedNameProblem(key); p != "" {
			return fmt.Sprintf("-protected-labels: %q is not a label key: %s", key, p)
		}
	}
	return ""
}

// readInput reads at most limit bytes of the reply, as a provider does.
func readInput(name string, stdin io.Reader, limit int64) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(stdin, limit))
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

func readNode(name string) (*corev1.Node, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var node corev1.Node
	if err := json.Unmarshal(b, &node); err != nil {
		return nil, fmt.Errorf("%s: not a node: %w", name, err)
	}
	if node.Kind != "" && node.Kind != "Node" {
		return nil, errors.New(name + ": kind is " + node.Kind + ", not Node")
	}
	return &node, nil
}

// apply is a provider's ping: the node's step and the device pool's, with
// the same ping and options, as a provider that publishes devices runs
// them (before is the pool as published).
func apply(node *corev1.Node, before []devicepool.Device, ping nodeapply.Ping, opts nodeapply.Options) (nodeapply.Result, devicepool.Result) {
	return nodeapply.Apply(node, ping, opts), devicepool.Apply(before, ping, opts.Reply)
}
