package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/flagdoc"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/election"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/rights"
)

// runCommand runs the provider's main with args in a child process (this
// test binary, re-executed, as startProviderProcess does) and returns its
// exit status and what it wrote. Its kubeconfig does not exist: a
// provider that got past its flags would stop there, with status 1.
func runCommand(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-kubeconfig", filepath.Join(t.TempDir(), "none")}, args...)...)
	cmd.Env = providerEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("%v: %v", args, err)
	return 0, ""
}

// TestFlagErrors: a flag that cannot work is refused at start, before
// anything runs, with exit status 2 and a message that names it, as the
// flag package refuses a value it cannot parse. Before, -interval 0
// panicked in the ping loop, and -timeout 0 ran pings with no deadline.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the message
	}{
		{"no interval", []string{"-interval", "0"}, `invalid value "0s" for flag -interval: want more than zero`},
		{"a negative interval", []string{"-interval", "-1s"}, "for flag -interval:"},
		{"no timeout", []string{"-timeout", "0"}, `invalid value "0s" for flag -timeout: want more than zero`},
		{"a timeout as long as the interval", []string{"-interval", "5s", "-timeout", "5s"}, "for flag -timeout: want less than -interval 5s"},
		{"a timeout longer than the interval", []string{"-interval", "1s", "-timeout", "3s"}, "for flag -timeout:"},
		{"the default timeout given with a shorter interval", []string{"-interval", "2s", "-timeout", "3s"}, `invalid value "3s" for flag -timeout: want less than -interval 2s`},
		{"a timeout given alone, longer than the default interval", []string{"-timeout", "6s"}, "for flag -timeout: want less than -interval 5s"},
		{"an interval too short for any timeout", []string{"-interval", "1ns"}, `invalid value "1ns" for flag -interval: too short: -timeout, which follows it, would be 0s`},
		{"no status report", []string{"-status-report", "0"}, "for flag -status-report:"},
		{"scratch space that is no quantity", []string{"-ephemeral-storage", "lots"}, `invalid value "lots" for flag -ephemeral-storage: want a quantity of bytes more than zero`},
		{"no scratch space", []string{"-ephemeral-storage", "0"}, "for flag -ephemeral-storage:"},
		{"a label namespace no plugin may have", []string{"-label-namespaces", "nvidia.com,kubernetes.io"}, `invalid value "kubernetes.io" for flag -label-namespaces: want a namespace a plugin's labels may have: no plugin may set labels there`},
		{"a label namespace that is no domain", []string{"-label-namespaces", "Not_A_Domain"}, `for flag -label-namespaces: want a namespace`},
		{"a lease of no time", []string{"-lease-duration", "0"}, "for flag -lease-duration:"},
		{"a lease not in whole seconds", []string{"-lease-duration", "1500ms"}, "for flag -lease-duration: want whole seconds"},
		{"a lease renewed no sooner than it ends", []string{"-lease-duration", "10s", "-lease-renew", "10s"}, "for flag -lease-renew:"},
		{"a negative renew interval", []string{"-lease-renew", "-1s"}, "for flag -lease-renew:"},
		{"a negative grace", []string{"-grace", "-1s"}, "for flag -grace:"},
		{"no node", []string{"-nodes", "0"}, "for flag -nodes:"},
		{"many nodes of one name", []string{"-nodes", "2", "-node", "vk"}, "for flag -node: with more than one node"},
		{"a node name the API server refuses", []string{"-node", "Virtual_Node"}, `invalid value "Virtual_Node" for flag -node: want a node name`},
		{"a plugin URL without a scheme", []string{"-plugin", "127.0.0.1:4000/status"}, "plugin URL: "},
		{"a plugin URL of another scheme", []string{"-plugin", "ftp://127.0.0.1/status"}, `plugin URL: scheme "ftp": want http, https or unix`},
		{"a client certificate without its key", []string{"-plugin", "https://plugin.example/status", "-plugin-cert-file", "vk.pem"}, "-plugin-cert-file: needs -plugin-key-file"},
		{"a CA file for plain HTTP", []string{"-plugin-ca-file", "ca.pem"}, "-plugin-ca-file: only with an https:// plugin URL"},
		{"an HTTP path for an http URL", []string{"-plugin-http-path", "/status"}, "-plugin-http-path: only with a unix:// plugin URL"},
		{"an unknown unreachable policy", []string{"-unreachable", "Evict"}, `invalid value "Evict" for flag -unreachable`},
		{"not ready after, without NoSchedule", []string{"-not-ready-after", "1h"}, `invalid value "1h0m0s" for flag -not-ready-after: want zero or more, with the unreachable policy NoSchedule`},
		{"no connectivity condition", []string{"-connectivity-condition", ""}, "for flag -connectivity-condition:"},
		{"Ready as the connectivity condition", []string{"-connectivity-condition", "Ready"}, "for flag -connectivity-condition: want a type of its own"},
		{"a connectivity condition that is no type", []string{"-connectivity-condition", "plugin reachable"}, "for flag -connectivity-condition:"},
		{"a metrics address without a port", []string{"-metrics-addr", "127.0.0.1"}, "for flag -metrics-addr:"},
		{"a DRA driver in capitals", []string{"-dra-driver", "GPU.example.com"}, `invalid value "GPU.example.com" for flag -dra-driver: want a driver name`},
		{"a DRA driver that is no domain", []string{"-dra-driver", "gpu_example"}, "for flag -dra-driver: want a driver name"},
		{"a DRA driver of 64 characters", []string{"-dra-driver", strings.Repeat("g", 52) + ".example.com"}, "for flag -dra-driver: want a driver name: must be no more than 63 characters"},
		{"a renew deadline as long as the lease", []string{"-leader-elect", "-leader-elect-lease-duration", "10s", "-leader-elect-renew-deadline", "10s"}, "for flag -leader-elect-renew-deadline:"},
		{"a renew deadline longer than the lease", []string{"-leader-elect", "-leader-elect-renew-deadline", "20s"}, "for flag -leader-elect-renew-deadline:"},
		{"a retry period near the renew deadline", []string{"-leader-elect", "-leader-elect-retry-period", "9s"}, "for flag -leader-elect-retry-period:"},
		{"no retry period", []string{"-leader-elect", "-leader-elect-retry-period", "0"}, "for flag -leader-elect-retry-period:"},
		{"no lease duration", []string{"-leader-elect", "-leader-elect-lease-duration", "0"}, "for flag -leader-elect-lease-duration:"},
		{"an election lease too short for any retry period", []string{"-leader-elect-lease-duration", "2ns"}, `invalid value "2ns" for flag -leader-elect-lease-duration: too short: -leader-elect-retry-period, which follows it, would be 0s`},
		{"the default renew deadline given with a shorter lease", []string{"-leader-elect-lease-duration", "6s", "-leader-elect-renew-deadline", "10s"}, "for flag -leader-elect-renew-deadline:"},
		{"no identity", []string{"-leader-elect", "-leader-elect-id", ""}, "for flag -leader-elect-id:"},
		{"a namespace that is no name", []string{"-leader-elect", "-leader-elect-namespace", "Kube_System"}, "for flag -leader-elect-namespace:"},
		{"a Lease name that is no name", []string{"-leader-elect", "-leader-elect-name", "my lease"}, "for flag -leader-elect-name:"},
		{"election timings that cannot work, without -leader-elect", []string{"-leader-elect-renew-deadline", "20s"}, "for flag -leader-elect-renew-deadline:"},
		{"a ServiceAccount without its namespace", []string{"-service-account", "pingnode-provider"}, `invalid value "pingnode-provider" for flag -service-account: want namespace/name`},
		{"a ServiceAccount in a namespace that is no name", []string{"-service-account", "Ping_Node/provider"}, "for flag -service-account: want a namespace"},
		{"a ServiceAccount whose name is no name", []string{"-service-account", "pingnode/a/b"}, "for flag -service-account: want namespace/name"},
		{"the rights of a configuration that cannot work", []string{"-print-rbac", "-interval", "0"}, "for flag -interval:"},
		{"the policy of a configuration that cannot work", []string{"-print-node-policy", "-nodes", "2"}, "for flag -node:"},
		{"parts with more than one node", []string{"-parts", "-nodes", "2", "-node", "vk-{i}-{part}"}, `invalid value "2" for flag -nodes: with -parts, want 1`},
		{"a parts template without the part", []string{"-parts", "-node", "vk"}, `invalid value "vk" for flag -node: with -parts, the name must hold {part} exactly once`},
		{"a parts template with the part twice", []string{"-parts", "-node", "vk-{part}-{part}"}, "for flag -node: with -parts, the name must hold {part} exactly once"},
		{"a parts template too long for a part of 63", []string{"-parts", "-node", strings.Repeat("a", 100) + "-{part}-" + strings.Repeat("b", 89)}, "for flag -node: 191 characters around {part}, want at most 190"},
		{"a parts template in capitals", []string{"-parts", "-node", "Slurm-{part}"}, `for flag -node: with the part "a" it names the node "Slurm-a", which is no node name`},
		{"a parts template that ends with a dot", []string{"-parts", "-node", "{part}."}, `for flag -node: with the part "a" it names the node "a."`},
		{"a parts template with the index", []string{"-parts", "-node", "vk-{i}-{part}"}, "for flag -node: with the part"},
		{"a parts owner that is no label value", []string{"-parts", "-parts-owner", "not a value"}, `invalid value "not a value" for flag -parts-owner: want a label value`},
		{"a parts owner too long, derived from the template", []string{"-parts", "-node", "{part}." + strings.Repeat("x", 60) + ".org"}, "for flag -parts-owner: want a label value: must be no more than 63 bytes; not given, it is -node with {part} read as part: give one"},
		{"no part grace", []string{"-parts", "-part-grace", "0"}, `invalid value "0s" for flag -part-grace: want more than zero`},
		{"a confirmation deadline past the scheduler's", []string{"-confirm", "-confirm-deadline", "10m"}, `invalid value "10m0s" for flag -confirm-deadline: want zero (the default) or more, and less than the scheduler's binding timeout`},
		{"a part pin without its flag", []string{"-parts", "-part-pin", "slurm-job.vk.io/flags"}, `invalid value "slurm-job.vk.io/flags" for flag -part-pin: want an annotation key, = and the flag that names a part`},
		{"a part pin whose annotation is no key", []string{"-parts", "-part-pin", "slurm flags=--nodelist="}, "for flag -part-pin: want an annotation key"},
		{"a part node name without -parts", []string{"-node", "vk-{part}"}, "for flag -node: want a node name"},
		{"an argument after the flags", []string{"-interval", "5s", "extra"}, `unexpected argument "extra"`},
		{"a value that does not parse", []string{"-interval", "often"}, `invalid value "often" for flag -interval`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // a child process each
			code, out := runCommand(t, tt.args...)
			if code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("the message does not say %q:\n%s", tt.want, tail(out, 10))
			}
			if strings.Contains(out, "level=") {
				t.Errorf("it ran before it refused the flag:\n%s", tail(out, 10))
			}
		})
	}
}

// TestFlagDefaults: the defaults, and every flag given as the README
// gives it, pass the check; the provider then stops at its kubeconfig,
// which does not exist here.
func TestFlagDefaults(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"-nodes", "3", "-node", "vk-{i}", "-plugin", "http://127.0.0.1:4000/status/{i}"},
		{"-interval", "100ms", "-timeout", "50ms", "-status-report", "30s", "-lease-duration", "4s", "-lease-renew", "1s", "-grace", "0", "-held=false", "-compat"},
		{"-leader-elect", "-leader-elect-id", "a", "-metrics-addr", "127.0.0.1:0"},
		{"-unreachable", "NoSchedule", "-not-ready-after", "2h"},
		{"-ephemeral-storage", "500Gi", "-label-namespaces", "nvidia.com,example.org"},
		{"-dra-driver", "gpu.nvidia.com", "-held=false"},
		{"-plugin", "https://plugin.example:8443/status", "-plugin-ca-file", "ca.pem", "-plugin-ca-only", "-plugin-cert-file", "vk.pem", "-plugin-key-file", "vk-key.pem", "-plugin-token-file", "token"},
		{"-plugin", "unix:///run/plugin.sock", "-plugin-http-path", "/pinglink", "-plugin-token-file", "token"},
		{"-parts"},
		{"-parts", "-node", "slurm-{part}", "-parts-owner", "slurm", "-part-grace", "10s", "-dra-driver", "gpu.nvidia.com", "-leader-elect", "-leader-elect-id", "a"},
	} {
		code, out := runCommand(t, args...)
		if code != 1 || !strings.Contains(out, "kubeconfig") {
			t.Errorf("%v: exit status %d, want 1 at the kubeconfig:\n%s", args, code, tail(out, 10))
		}
	}
}

// TestPrintRBAC: -print-rbac and -print-node-policy print, and exit 0,
// the rights of the configuration the other flags give, as Access gives
// them: the nodes of -nodes and -node, the pods' rules (list and watch,
// delete, fenced by the policy) whatever -held and -dra-driver, the
// election's rules with -leader-elect only, the
// ResourceSlices' and ResourceClaims' rules and their fence with
// -dra-driver only, bound to -service-account.
func TestPrintRBAC(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"-nodes", "3", "-node", "vk-{i}", "-held=false"},
		{"-leader-elect", "-leader-elect-namespace", "pingnode", "-service-account", "pingnode/provider"},
		{"-nodes", "2", "-node", "vk-{i}", "-held=false", "-dra-driver", "gpu.nvidia.com", "-leader-elect"},
	} {
		a := accessOfArgs(t, args)
		for flag, want := range map[string]func() ([]byte, error){"-print-rbac": a.YAML, "-print-node-policy": a.PolicyYAML} {
			code, stdout, stderr := printCommand(t, append(slices.Clone(args), flag)...)
			if code != 0 || stderr != "" {
				t.Errorf("%v %s: exit status %d, want 0:\n%s", args, flag, code, stderr)
			}
			printed, err := want()
			if err != nil {
				t.Fatal(err)
			}
			if stdout != string(printed) {
				t.Errorf("%v %s printed:\n%s\nwant:\n%s", args, flag, stdout, printed)
			}
		}
		out, err := a.YAML()
		if err != nil {
			t.Fatal(err)
		}
		text := string(out)
		devices := a.DRADriver != ""
		// The pods bound to its nodes, whose deletion it finishes and which
		// it runs, with -held=false too.
		if pods := strings.Count(text, "- pods\n"); pods != 3 {
			t.Errorf("%v: %d rules of pods, want list and watch, delete, and patch, whatever -held (%v) and -dra-driver (%v)", args, pods, a.Held, devices)
		}
		if !strings.Contains(text, "- pods/status\n") {
			t.Errorf("%v: no rule of pods/status: a pod runs, and its status is written", args)
		}
		policy, err := a.PolicyYAML()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(policy), "- pods\n") {
			t.Errorf("%v: the policy does not fence the deletes of pods", args)
		}
		for what, has := range map[string]bool{
			"the ResourceSlices' rules": strings.Contains(text, "- resourceslices\n"),
			"the ResourceClaims' rules": strings.Contains(text, "- resourceclaims\n"),
			"the ResourceSlices' fence": strings.Contains(string(policy), "- resourceslices\n"),
		} {
			if has != devices {
				t.Errorf("%v: %s %v, want them with -dra-driver (%v)", args, what, has, devices)
			}
		}
		// Events on its pods, in their namespaces: every namespace.
		if !slices.ContainsFunc(a.Roles()[0].Rules, func(r rights.Rule) bool { return slices.Contains(r.Resources, "events") }) {
			t.Errorf("%v: no events in every namespace: its pods are told what the backend says of their jobs", args)
		}
		if election := strings.Contains(text, "leader election"); election != (a.Election != nil) {
			t.Errorf("%v: the election's rules %v, want them with -leader-elect", args, election)
		}
	}
	if a := accessOfArgs(t, []string{"-nodes", "3", "-node", "vk-{i}"}); !slices.Equal(a.Nodes, []string{"vk-0", "vk-1", "vk-2"}) {
		t.Errorf("the nodes %v, want vk-0, vk-1, vk-2", a.Nodes)
	}
}

// timings are the settings of the flags that follow another (see
// followers), and of the flags they follow.
type timings struct {
	Interval, Timeout                 time.Duration
	Lease, RenewDeadline, RetryPeriod time.Duration
}

// TestFlagDefaultsFollow: a flag whose value must be less than another
// flag's follows it when it is not given: the default, or a fraction of
// the other flag when that is less. A value given is kept as given. The
// regression: -interval 2s alone exited with status 2, since the default
// -timeout, 3s, was not less than it.
func TestFlagDefaultsFollow(t *testing.T) {
	defaults := timings{5 * time.Second, 3 * time.Second, 15 * time.Second, 10 * time.Second, 2 * time.Second}
	with := func(change func(*timings)) timings {
		w := defaults
		change(&w)
		return w
	}
	tests := []struct {
		name string
		args []string
		want timings
	}{
		{"the defaults", nil, defaults},
		{"a short interval alone", []string{"-interval", "2s"}, with(func(w *timings) { w.Interval, w.Timeout = 2*time.Second, 1200*time.Millisecond })},
		{"an interval a little short", []string{"-interval", "4s"}, with(func(w *timings) { w.Interval, w.Timeout = 4*time.Second, 2400*time.Millisecond })},
		{"an interval cut to the millisecond", []string{"-interval", "333ms"}, with(func(w *timings) { w.Interval, w.Timeout = 333*time.Millisecond, 199*time.Millisecond })},
		{"an interval under a millisecond", []string{"-interval", "500us"}, with(func(w *timings) { w.Interval, w.Timeout = 500*time.Microsecond, 300*time.Microsecond })},
		{"a long interval", []string{"-interval", "1m"}, with(func(w *timings) { w.Interval = time.Minute })},
		{"a timeout alone, less than the default interval", []string{"-timeout", "1s"}, with(func(w *timings) { w.Timeout = time.Second })},
		{"a timeout given, less than a short interval but more than 3/5 of it", []string{"-interval", "2s", "-timeout", "1900ms"}, with(func(w *timings) { w.Interval, w.Timeout = 2*time.Second, 1900*time.Millisecond })},
		{"a short election lease alone", []string{"-leader-elect-lease-duration", "6s"}, with(func(w *timings) {
			w.Lease, w.RenewDeadline, w.RetryPeriod = 6*time.Second, 4*time.Second, 800*time.Millisecond
		})},
		{"a short renew deadline alone", []string{"-leader-elect-renew-deadline", "2s"}, with(func(w *timings) {
			w.RenewDeadline, w.RetryPeriod = 2*time.Second, 400*time.Millisecond
		})},
		{"a long election lease alone", []string{"-leader-elect-lease-duration", "1m"}, with(func(w *timings) { w.Lease = time.Minute })},
		{"a retry period given, with a renew deadline that follows", []string{"-leader-elect-lease-duration", "6s", "-leader-elect-retry-period", "3s"}, with(func(w *timings) {
			w.Lease, w.RenewDeadline, w.RetryPeriod = 6*time.Second, 4*time.Second, 3*time.Second
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("virtualkubelet", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := registerFlags(fs)
			if err := fs.Parse(append([]string{"-leader-elect"}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			configs, e, err := f.settings(fs.Args())
			if err != nil {
				t.Fatalf("%v: %v", tt.args, err)
			}
			got := timings{configs[0].Interval, configs[0].Timeout, e.LeaseDuration, e.RenewDeadline, e.RetryPeriod}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%v: timings (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestStartWithShortInterval: the program itself, its main in a child
// process, gets past its flags with -interval 2s alone, or a short
// election lease alone, and stops only at its kubeconfig, which does not
// exist here (exit status 1, not the usage error's 2).
func TestStartWithShortInterval(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"a short interval", []string{"-interval", "2s"}},
		{"an interval under a second", []string{"-interval", "500ms"}},
		{"a short election lease", []string{"-leader-elect", "-leader-elect-lease-duration", "6s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // a child process each
			code, out := runCommand(t, tt.args...)
			if code != 1 || !strings.Contains(out, "kubeconfig") {
				t.Errorf("%v: exit status %d, want 1 at the kubeconfig:\n%s", tt.args, code, tail(out, 10))
			}
		})
	}
}

// TestStaticEphemeralStorage: -ephemeral-storage puts the scratch space on
// every node of the fleet as registered, in capacity and allocatable;
// without it a node advertises none.
func TestStaticEphemeralStorage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // "" for none
	}{
		{[]string{"-nodes", "2", "-node", "vk-{i}", "-ephemeral-storage", "500Gi"}, "500Gi"},
		{[]string{"-nodes", "2", "-node", "vk-{i}"}, ""},
	} {
		_, configs, _ := settingsOfArgs(t, tt.args)
		for _, cfg := range configs {
			for _, list := range []corev1.ResourceList{cfg.Static.Status.Capacity, cfg.Static.Status.Allocatable} {
				q, ok := list[corev1.ResourceEphemeralStorage]
				if got := map[bool]string{true: q.String(), false: ""}[ok]; got != tt.want {
					t.Errorf("%v: %s has ephemeral-storage %q, want %q", tt.args, cfg.Static.Name, got, tt.want)
				}
			}
		}
	}
}

// TestREADMEFlags: the README's table of flags is the one the flag set
// gives (each flag's default and help text), so that a flag is described
// once, in its help text. With -update, it writes it.
func TestREADMEFlags(t *testing.T) {
	flagdoc.Golden(t, "README.md", registerFlags(flag.NewFlagSet("virtualkubelet", flag.ContinueOnError)).fs, *update)
}

// TestMachineDefaults: -kubeconfig and -leader-elect-id, not given, are
// read from the machine when the flags are checked ($KUBECONFIG, the
// host name and process id), and not when they are registered, so that
// the README's table says what they are; given, even empty, each means
// what it says.
func TestMachineDefaults(t *testing.T) {
	t.Setenv("KUBECONFIG", "/from/the/environment")
	for _, tt := range []struct {
		args               []string
		kubeconfig, refuse string // refuse: in the error; "" when accepted
	}{
		{args: nil, kubeconfig: "/from/the/environment"},
		{args: []string{"-kubeconfig", "/given"}, kubeconfig: "/given"},
		{args: []string{"-kubeconfig", ""}, kubeconfig: ""},
		{args: []string{"-leader-elect", "-leader-elect-id", ""}, refuse: "-leader-elect-id"},
	} {
		fs := flag.NewFlagSet("virtualkubelet", flag.ContinueOnError)
		f := registerFlags(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		_, e, err := f.settings(nil)
		switch {
		case tt.refuse != "":
			if err == nil || !strings.Contains(err.Error(), tt.refuse) {
				t.Errorf("%q: error %v, want one that names %s", tt.args, err, tt.refuse)
			}
			continue
		case err != nil:
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if f.kubeconfig != tt.kubeconfig {
			t.Errorf("%q: kubeconfig %q, want %q", tt.args, f.kubeconfig, tt.kubeconfig)
		}
		if e != nil || f.election.Identity != election.DefaultIdentity() {
			t.Errorf("%q: election %v, identity %q, want none and %q", tt.args, e, f.election.Identity, election.DefaultIdentity())
		}
	}
}
