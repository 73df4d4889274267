package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pingnode/pingnode/pingstatus"
)

// config is what the flags say: where and how to serve, and the backend
// to describe.
type config struct {
	addr, socket      string // -addr, -unix-socket
	certFile, keyFile string // -cert-file, -key-file
	clientCA          string // -client-ca-file
	tokenFile         string // -token-file
	backend           Backend
	opts              pingstatus.Options // the provider's: -label-namespaces
}

// errUsage is what parseFlags returns for a flag it refused, once it has
// said why: the plugin exits with status 2, as the flag package does (and
// with 0 for -h, flag.ErrHelp).
var errUsage = errors.New("usage")

// parseFlags reads the flags in args and checks them all, as the provider
// will check the reply they make; it writes to stderr why it refuses them.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("plugin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	b := &c.backend
	fs.StringVar(&c.addr, "addr", "127.0.0.1:4000", "address to listen on")
	fs.StringVar(&c.socket, "unix-socket", "", "listen on this Unix socket instead of -addr")
	fs.StringVar(&c.certFile, "cert-file", "", "serve HTTPS with this PEM certificate (with -key-file)")
	fs.StringVar(&c.keyFile, "key-file", "", "the PEM key of -cert-file")
	fs.StringVar(&c.clientCA, "client-ca-file", "", "with -cert-file: require client certificates signed by these PEM CAs (mutual TLS)")
	fs.StringVar(&c.tokenFile, "token-file", "", "require this bearer token, read from the file at each request")
	fs.StringVar(&b.CPU, "cpu", "64", "cpu available (with -basis total: all the backend gives the node)")
	fs.StringVar(&b.Memory, "memory", "250000Mi", "memory available (with -basis total: all the backend gives the node)")
	fs.StringVar(&b.Pods, "pods", "500", "pods available (with -basis total: all the backend gives the node)")
	fs.StringVar(&b.EphemeralStorage, "ephemeral-storage", "", "scratch space available to pods (ephemeral-storage), like 1800Gi; empty: not reported")
	fs.BoolVar(&b.Draining, "drain", false, "set the draining taint")
	fs.Func("basis", "what the figures of the other flags and the -devices counts are: available, what the backend has free now (what this node's pods use there is not in it), or total, all the backend gives the node, its pods' share in it (the reply's resources.basis; not sent unless given, which the provider reads as available)", func(s string) error {
		switch pingstatus.Basis(s) {
		case pingstatus.BasisAvailable, pingstatus.BasisTotal:
			b.Basis = s
			return nil
		}
		return errors.New("want available or total")
	})
	b.Hugepages = map[string]string{}
	fs.Func("hugepages", "huge pages as size=memory, like 2Mi=4Gi (repeatable)", func(s string) error {
		size, memory, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("want size=memory, got %q", s)
		}
		b.Hugepages[size] = memory
		return nil
	})
	b.Devices = map[string]int{}
	fs.Func("gpu", "a device as name=count, like nvidia.com/gpu=4 (repeatable)", func(s string) error {
		name, count, ok := strings.Cut(s, "=")
		n, err := strconv.Atoi(count)
		if !ok || err != nil {
			return fmt.Errorf("want name=count, got %q", s)
		}
		b.Devices[name] = n
		return nil
	})
	b.Labels = map[string]string{}
	fs.Func("label", "a node label as key=value, like nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB (repeatable), in feature.node.kubernetes.io, profile.node.kubernetes.io or a namespace of -label-namespaces", func(s string) error {
		key, value, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("want key=value, got %q", s)
		}
		b.Labels[key] = value
		return nil
	})
	fs.Func("devices", "a JSON file holding the reply's devices list, groups of identical devices (see testdata/gpus.json); a group's count is, with the default basis (available), how many of its devices are free now on the backend, so that a GPU a pod already runs on is not in it, and with -basis total, every GPU of the group the backend gives the node", func(file string) error {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		b.DeviceGroups = []pingstatus.DeviceResponse{}
		return json.Unmarshal(data, &b.DeviceGroups)
	})
	fs.Func("label-namespaces", "comma-separated namespaces in which the provider allows labels besides node-feature-discovery's, like nvidia.com (its -label-namespaces): the reply is checked with them", func(s string) error {
		c.opts.LabelNamespaces = strings.Split(s, ",")
		return nil
	})
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return c, err
	} else if err != nil {
		return c, errUsage
	}
	var problems []string
	if fs.NArg() > 0 {
		problems = append(problems, "no arguments, only flags: got "+strconv.Quote(fs.Arg(0)))
	}
	if (c.certFile == "") != (c.keyFile == "") || c.clientCA != "" && c.certFile == "" {
		problems = append(problems, "-cert-file and -key-file go together, and -client-ca-file needs them")
	}
	problems = append(problems, devicesProblems(c.backend)...)
	problems = append(problems, labelsProblems(c.backend.Labels, c.opts)...)
	for _, p := range problems {
		fmt.Fprintln(stderr, "plugin:", p)
	}
	if len(problems) > 0 {
		return c, errUsage
	}
	return c, nil
}

// labelsProblems returns what is wrong with the -label-namespaces and
// -label flags, each a line: a namespace must be one a provider can allow
// (a label in it passes the check that allows it: not kubernetes.io, k8s.io
// or a name that is no DNS subdomain), and each label must pass the
// provider's check with those namespaces.
func labelsProblems(labels map[string]string, opts pingstatus.Options) []string {
	var problems []string
	for _, ns := range opts.LabelNamespaces {
		probe := pingstatus.PingResponse{Labels: map[string]string{ns + "/x": ""}}
		if w := probe.Validate(pingstatus.Options{LabelNamespaces: []string{ns}}); len(w) > 0 {
			problems = append(problems, fmt.Sprintf("-label-namespaces: %q cannot be allowed: %s", ns, w[0].Message))
		}
	}
	if len(problems) > 0 {
		return problems
	}
	for _, w := range (pingstatus.PingResponse{Labels: labels}).Validate(opts) {
		problems = append(problems, "-label: "+w.String())
	}
	return problems
}

// devicesProblems returns what is wrong with the -devices file and the
// -gpu flags, each a line, as the provider would judge the reply: each
// group as the API server judges a device, and no -gpu count beside
// devices (the scheduler counts the devices themselves).
func devicesProblems(b Backend) []string {
	if b.DeviceGroups == nil {
		return nil
	}
	var problems []string
	reply := Reply(b)
	for _, w := range (pingstatus.PingResponse{Resources: reply.Resources, Devices: reply.Devices}).Validate(pingstatus.Options{}) {
		problems = append(problems, "-devices: "+w.String())
	}
	return problems
}
