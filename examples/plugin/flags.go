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
	"time"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
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
	fleet             *partsfleet.Config // -parts-generate and its flags; nil without it
	slurm             bool               // -slurm
	statusCache       time.Duration      // -status-cache, or SlurmStatusCache with -slurm
	minJobAge         time.Duration      // -slurm-min-job-age, SlurmMinJobAge unless given
	sbatchLatency     time.Duration      // -sbatch-latency
	scancelFailures   int                // -scancel-failures
	slurmData         string             // -slurm-data
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
	fleet := partsFlags(fs, b)
	slurmFlags(fs, &c)
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
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	problems = append(problems, partsFlagsProblems(set)...)
	if set["parts"] {
		problems = append(problems, partsProblems("-parts", c.backend.Parts, c.opts)...)
	}
	if set["parts-generate"] {
		c.fleet = fleet
		if fp := fleetProblems(*fleet); fp != nil {
			problems = append(problems, fp...)
		} else { // only a fleet of a size that can work is made
			problems = append(problems, partsProblems("-parts-generate", partsfleet.New(*fleet).Parts(), c.opts)...)
		}
	}
	problems = append(problems, slurmFlagsProblems(c.slurm, set)...)
	if c.slurm {
		if !set["status-cache"] {
			c.statusCache = SlurmStatusCache
		}
		if !set["slurm-min-job-age"] {
			c.minJobAge = SlurmMinJobAge
		}
		if c.fleet != nil {
			c.fleet.Slurm, c.fleet.MinJobAge = true, c.minJobAge
		}
	}
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
		probe := pingstatus.PingResponse{NodeResponse: pingstatus.NodeResponse{Labels: map[string]string{ns + "/x": ""}}}
		if w := probe.Validate(pingstatus.Options{LabelNamespaces: []string{ns}}); len(w) > 0 {
			problems = append(problems, fmt.Sprintf("-label-namespaces: %q cannot be allowed: %s", ns, w[0].Message))
		}
	}
	if len(problems) > 0 {
		return problems
	}
	for _, w := range (pingstatus.PingResponse{NodeResponse: pingstatus.NodeResponse{Labels: labels}}).Validate(opts) {
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
	for _, w := range (pingstatus.PingResponse{NodeResponse: pingstatus.NodeResponse{Resources: reply.Resources, Devices: reply.Devices}}).Validate(pingstatus.Options{}) {
		problems = append(problems, "-devices: "+w.String())
	}
	return problems
}

// partsFlags defines the flags of a backend served as parts on fs: -parts,
// which reads its file into b.Parts, and -parts-generate with its own,
// which fill the fleet returned.
func partsFlags(fs *flag.FlagSet, b *Backend) *partsfleet.Config {
	fleet := &partsfleet.Config{CPUs: 48, MemoryMi: 192000, Churn: 0.02, Seed: 1}
	fs.Func("parts", "a JSON file holding the backend's parts, a JSON array of objects each with a name (a DNS label) and a reply's resources, taints, labels and devices (see testdata/parts.json), served as the reply's nodes; not with -parts-generate nor the flags of the backend's resources and devices", func(file string) error {
		var err error
		b.Parts, err = readParts(file)
		return err
	})
	fs.Func("parts-generate", "serve N generated machines as parts, cn001 and on, whose free cpus change as jobs start and end: a fleet for a benchmark (at most 5000, the provider's default limit)", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return errors.New("want a number of machines, 0 or more")
		}
		fleet.Machines = n
		return nil
	})
	fs.Func("parts-cpus", "with -parts-generate: the cpus of each machine (default 48)", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > partsfleet.MaxCPUs {
			return fmt.Errorf("want 1 to %d cpus", partsfleet.MaxCPUs)
		}
		fleet.CPUs = n
		return nil
	})
	fs.Func("parts-memory", "with -parts-generate: the memory of each machine, in Mi or Gi, like 192000Mi (the default) or 256Gi; a machine's free memory is in proportion of its free cpus, or with -slurm its memory less its native jobs' (in proportion of their cpus) and its jobs'", func(s string) error {
		mi, ok := mebibytes(s)
		if !ok {
			return errors.New("want a whole number of Mi or Gi, like 192000Mi")
		}
		fleet.MemoryMi = mi
		return nil
	})
	fs.Func("parts-churn", "with -parts-generate: the chance that a machine starts or ends a native job (one of the backend's own, not a pod) at each reply, from 0 to 1 (default 0.02)", func(s string) error {
		p, err := strconv.ParseFloat(s, 64)
		if err != nil || !(p >= 0 && p <= 1) {
			return errors.New("want a fraction from 0 to 1")
		}
		fleet.Churn = p
		return nil
	})
	fs.Func("parts-stuck", "with -parts-generate: a machine, like cn006, that looks free and never starts anything (repeatable): it replies with every cpu free, and a pod placed on it stays queued until it is deleted, as a machine whose daemon is broken", func(s string) error {
		fleet.Stuck = append(fleet.Stuck, s)
		return nil
	})
	fs.Uint64Var(&fleet.Seed, "parts-seed", fleet.Seed, "with -parts-generate: the seed of its random source; the same seed gives the same replies")
	return fleet
}

// mebibytes reads s, a whole number of Mi or Gi, as MiB; it reports
// false for anything else, or a number over [partsfleet.MaxMemoryMi].
func mebibytes(s string) (int64, bool) {
	scale := int64(1)
	digits, ok := strings.CutSuffix(s, "Mi")
	if !ok {
		digits, ok = strings.CutSuffix(s, "Gi")
		scale = 1024
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if !ok || err != nil || n < 0 || n > partsfleet.MaxMemoryMi/scale {
		return 0, false
	}
	return n * scale, true
}

// partsFlagsProblems returns what is wrong with the flags set (by name)
// for parts, each a line: -parts and -parts-generate are one or the
// other, the flags of a generated fleet need it, and beside parts,
// which carry their own, no flag may say what the backend as a whole has
// (only -drain and -label apply to every part).
func partsFlagsProblems(set map[string]bool) []string {
	var problems []string
	source := ""
	switch {
	case set["parts"] && set["parts-generate"]:
		problems = append(problems, "-parts and -parts-generate: one or the other")
	case set["parts"]:
		source = "-parts"
	case set["parts-generate"]:
		source = "-parts-generate"
	}
	for _, name := range []string{"parts-cpus", "parts-memory", "parts-churn", "parts-seed", "parts-stuck"} {
		if set[name] && !set["parts-generate"] {
			problems = append(problems, "-"+name+": only with -parts-generate")
		}
	}
	for _, name := range []string{"cpu", "memory", "pods", "ephemeral-storage", "hugepages", "gpu", "devices", "basis"} {
		if set[name] && source != "" {
			problems = append(problems, "-"+name+": not with "+source+": each part has its own resources and devices")
		}
	}
	return problems
}
