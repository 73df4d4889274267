package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/election"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/rights"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// flags are the settings of the command line. registerFlags registers
// every one of them, with its default and what it does; settings checks
// them, once, and turns them into the providers' configurations.
type flags struct {
	fs *flag.FlagSet // where they are registered: it knows which were given

	kubeconfig   string
	nodes        int
	node         string
	plugin       string
	metricsAddr  string
	grace        time.Duration
	connectivity string // the connectivity condition's type
	// ephemeralStorage is the scratch space the node advertises until its
	// plugin says: a quantity, or empty for none.
	ephemeralStorage string
	base             vnode.Config // what every node of the fleet shares

	// parts is -parts: serve the plugin's parts, each a node named by the
	// -node template; partsOwner and partGrace are its settings.
	parts      bool
	partsOwner string
	partGrace  time.Duration

	leaderElect bool
	election    election.Election

	// serviceAccount is -service-account, namespace/name; saNamespace and
	// saName are its parts, once checked.
	serviceAccount         string
	saNamespace, saName    string
	printRBAC, printPolicy bool
	kubelet                kubeletFlags // kubelet.go
}

// DefaultServiceAccount is the ServiceAccount deploy/ runs the provider as.
const DefaultServiceAccount = "pingnode/pingnode-provider"

// DefaultPartsNode is the -node template with -parts, when -node is not
// given.
const DefaultPartsNode = "pingnode-virtual-" + vnode.PartToken

// DefaultTimeout is how long one ping may take when -timeout is not
// given and -interval is 5 s or more; with a shorter interval, the
// timeout is 3/5 of it (see [followers]).
const DefaultTimeout = 3 * time.Second

// registerFlags registers the command line's flags on fs.
func registerFlags(fs *flag.FlagSet) *flags {
	f := &flags{fs: fs, base: vnode.Config{StaticKeys: []string{vnode.StaticTaintKey}}}
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "the cluster's kubeconfig `file`; not given: $KUBECONFIG; empty: the in-cluster configuration")
	fs.IntVar(&f.nodes, "nodes", 1, "how many virtual nodes to run, each with its own Lease, client and plugin URL: "+Index+" in -node (required with more than one) and in -plugin is the node's index, from 0")
	fs.StringVar(&f.node, "node", "pingnode-virtual", "the node's `name`; with -nodes above 1 it must hold "+Index+". With -parts, a template that holds "+vnode.PartToken+" exactly once, the part's name (-node 'slurm-"+vnode.PartToken+"' names the node of the part cn001 slurm-cn001), "+DefaultPartsNode+" when not given; it must make a valid node name (a DNS subdomain of at most 253 characters) of every valid part name (a DNS label of at most 63), so at most 190 characters around "+vnode.PartToken+"")
	fs.StringVar(&f.plugin, "plugin", "http://127.0.0.1:4000/status", "the plugin's status `URL`: http://, https://, or unix:///path/to/plugin.sock (with -plugin-http-path); "+Index+" in it is the node's index")
	f.base.Transport.AddFlags(fs, "plugin-")
	fs.DurationVar(&f.base.Interval, "interval", 5*time.Second, "how often the plugin is pinged; more than zero")
	fs.DurationVar(&f.base.Timeout, "timeout", DefaultTimeout, "how long one ping may take; more than zero and less than -interval, so that a plugin that hangs fails its ping instead of stalling the loop. Not given, it is the default or 3/5 of -interval, whichever is less: -interval 2s alone pings with a 1.2 s timeout")
	fs.DurationVar(&f.base.Transport.CallTimeout, "pod-timeout", pingclient.DefaultCallTimeout, "how long one call of the plugin's pod API (/create, /status of pods, /delete) may take, more than zero: their work takes longer than a ping's (interLink's API gives 120 s)")
	fs.DurationVar(&f.base.StatusReport, "status-report", vnode.DefaultStatusReport, "how often the status of a steady node is written (a change is written at once); the first report after a start or a change moves by a random shift of up to half of it")
	fs.DurationVar(&f.base.LeaseDuration, "lease-duration", vnode.DefaultLeaseDuration, "the duration of the node's Lease in kube-node-lease, in whole seconds")
	fs.DurationVar(&f.base.LeaseRenew, "lease-renew", 0, "how often the node's Lease is renewed, less than -lease-duration; 0: a quarter of -lease-duration (10 s at its default)")
	fs.BoolVar(&f.base.Compat, "compat", false, "interLink 0.6.2's taint rule: replace every taint but the protected ones")
	fs.DurationVar(&f.grace, "grace", nodeapply.DefaultGrace, "how long the plugin may fail to answer before the node takes no new pods; 0: at the first failed ping (interLink's rule)")
	fs.TextVar(&f.base.Unreachable, "unreachable", nodeapply.UnreachableNotReady, "the `state` a node takes once its plugin has not answered for -grace: NotReady (Ready False: the node lifecycle controller taints it NoExecute, and running pods are evicted after their toleration, 300 s by default) or NoSchedule (Ready stays True, and the taint "+nodeapply.UnreachableTaintKey+":NoSchedule keeps new pods away while running pods stay)")
	fs.DurationVar(&f.base.NotReadyAfter, "not-ready-after", 0, "with -unreachable NoSchedule: turn Ready False after all once the plugin has not answered for this long (0: never)")
	fs.Func("label-namespaces", "comma-separated `namespaces`, besides node-feature-discovery's feature.node.kubernetes.io and profile.node.kubernetes.io, in which the plugin may set the node's labels, each with its subdomains, like nvidia.com; never kubernetes.io, k8s.io or their subdomains. The labels the provider registers the node with are its own: no plugin may set them. -print-node-policy fences the provider's token to the same namespaces", func(s string) error {
		f.base.LabelNamespaces = strings.Split(s, ",")
		return nil
	})
	fs.StringVar(&f.ephemeralStorage, "ephemeral-storage", "", "the scratch space (ephemeral-storage) the node advertises at registration, a `quantity` like 500Gi, until its plugin reports its own (resources.ephemeralStorage); empty: none, and the scheduler places no pod that requests any")
	fs.StringVar(&f.connectivity, "connectivity-condition", string(nodeapply.DefaultConnectivityCondition), "the `type` of the condition that says whether the plugin answered its last ping; not one the provider sets otherwise (Ready, the pressures)")
	fs.StringVar(&f.base.DRADriver, "dra-driver", "", "publish the plugin's devices as Dynamic Resource Allocation devices (ResourceSlices, Kubernetes 1.34 and later) of this `driver`, a lowercase DNS subdomain of at most 63 characters, such as gpu.example.com: one pool a node, named after it; empty: publish none, and ignore a reply's devices (the log says so once)")
	fs.BoolVar(&f.base.Confirm, "confirm", false, "hold each pod that asks for the backend's confirmation (a request of "+confirm.DefaultResource+") before it binds to a node of this provider's, until the backend runs it (Dynamic Resource Allocation binding conditions, Kubernetes 1.36 and later): the pod's job is made on the plugin (interLink's /create, /status and /delete) while the pod waits, and the pod goes elsewhere when the backend refuses it or has not started it within -confirm-deadline. Each node publishes a confirmation device of the driver "+confirm.DefaultDriver+", and the DeviceClass "+confirm.DefaultClass+" is created")
	fs.DurationVar(&f.base.ConfirmDeadline, "confirm-deadline", confirm.DefaultDeadline, "with -confirm: how long a pod may wait for the backend to start it before the node refuses it, less than the scheduler's binding timeout (600 s); a refused pod of a node of its own keeps its job, and its place in the backend's queue, and comes back to the node")
	fs.StringVar(&f.base.PartPin, "part-pin", vnode.DefaultPartPin, "with -parts: pin the job of a part's node to its part in the plugin's words, as annotation=flag: the pod sent to the plugin carries the flag and the part's name appended to that annotation, after the flags it has (interLink's Slurm plugin copies slurm-job.vk.io/flags into sbatch's); empty: no pin")
	fs.BoolVar(&f.base.CountHeld, "held", true, "read the plugin's figures as available now, and add what this node's running pods hold; false: write them as they are")
	fs.BoolVar(&f.parts, "parts", false, "serve the plugin's parts (its reply's nodes: machines, or partitions of identical machines), each as a node of its own, all from one ping of one plugin: -node is then a template, "+vnode.PartToken+" in it, once, the part's name, and -nodes must be 1 or not given. Without it, a reply that lists parts leaves the node as it is, and the log says so once when such a reply appears (pingnode_warnings_total{subject=\"part\",action=\"ignored\"} counts each)")
	fs.DurationVar(&f.partGrace, "part-grace", nodeapply.DefaultGrace, "with -parts: how long a part's node keeps its running pods once the reply no longer lists its part (nodeapply.Options.PartGrace), more than zero: new pods are kept away at once (the taint "+nodeapply.PartGoneTaintKey+":NoSchedule), after it Ready turns False and the node's pods are evicted by their tolerations, and the node is deleted once no pod holds it")
	fs.StringVar(&f.partsOwner, "parts-owner", "", "with -parts: the `owner` of the parts' nodes, the value of their label "+vnode.OwnerLabel+", which says they are this provider's: it serves those it finds at start and after a takeover, and touches no other node. A label value, at most 63 characters; not given: -node with "+vnode.PartToken+" read as part (slurm-part for slurm-"+vnode.PartToken+"), and a template that makes one longer needs one given")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "the `host:port` to serve Prometheus metrics on, at /metrics, and the probes /healthz and /readyz; empty: none")
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader among replicas with a Lease: only the leader serves the nodes and pings")
	fs.StringVar(&f.election.Namespace, "leader-elect-namespace", metav1.NamespaceDefault, "the `namespace` of the leader election Lease")
	fs.StringVar(&f.election.Name, "leader-elect-name", "", "the `name` of the leader election Lease (empty: pingnode- and the -node pattern, "+Index+" read as fleet and "+vnode.PartToken+" as parts)")
	fs.StringVar(&f.election.Identity, "leader-elect-id", "", "this replica's `identity` in the Lease, not empty; not given: the host name and the process id")
	fs.DurationVar(&f.election.LeaseDuration, "leader-elect-lease-duration", election.DefaultLease, "how long a standby waits after the leader's last renewal before it takes over")
	fs.DurationVar(&f.election.RenewDeadline, "leader-elect-renew-deadline", election.DefaultRenewDeadline, "how long the leader tries to renew before it stops (it exits); less than -leader-elect-lease-duration. Not given, it is the default or 2/3 of -leader-elect-lease-duration, whichever is less")
	fs.DurationVar(&f.election.RetryPeriod, "leader-elect-retry-period", election.DefaultRetryPeriod, "how often the leader renews and a standby tries to take over; less than -leader-elect-renew-deadline divided by 1.2 (client-go's rule). Not given, it is the default or 1/5 of -leader-elect-renew-deadline, whichever is less")
	fs.StringVar(&f.serviceAccount, "service-account", DefaultServiceAccount, "`namespace/name` of the ServiceAccount the provider runs as, which -print-rbac and -print-node-policy give the rights to")
	fs.BoolVar(&f.printRBAC, "print-rbac", false, "print the RBAC rules the provider needs for the configuration the other flags give (its nodes, -held, -leader-elect, -dra-driver, -parts), bound to -service-account, as YAML, and exit 0")
	fs.BoolVar(&f.printPolicy, "print-node-policy", false, "print a ValidatingAdmissionPolicy that lets -service-account create only the nodes and Leases of this configuration (what RBAC cannot name), change only the labels of its nodes that -label-namespaces allows, delete only its nodes' pods being deleted, with -dra-driver write only ResourceSlices of that driver on its nodes, and with -parts change and delete only nodes of its template with its ownership label, as YAML, and exit 0")
	f.kubelet.register(fs)
	return f
}

// configFlags and electionFlags name the flag of each setting.
var (
	configFlags = map[string]string{
		"Static.Name": "node", "PluginURL": "plugin", "Interval": "interval", "Timeout": "timeout",
		"StatusReport": "status-report", "LeaseDuration": "lease-duration", "LeaseRenew": "lease-renew",
		"Grace": "grace", "NotReadyAfter": "not-ready-after", "ConnectivityCondition": "connectivity-condition",
		"LabelNamespaces": "label-namespaces", "DRADriver": "dra-driver",
		"ConfirmDeadline": "confirm-deadline", "PartPin": "part-pin",
		"Parts.Template": "node", "Parts.Owner": "parts-owner", "Parts.Grace": "part-grace",
	}
	electionFlags = map[string]string{
		"Namespace": "leader-elect-namespace", "Name": "leader-elect-name", "Identity": "leader-elect-id",
		"LeaseDuration": "leader-elect-lease-duration", "RenewDeadline": "leader-elect-renew-deadline",
		"RetryPeriod": "leader-elect-retry-period",
	}
)

// followers are the flags whose value must be less than another flag's,
// a flag followed before its followers. One not given is its default,
// or a fraction of the flag it follows when that is less, so that a
// default never conflicts: only values given on the command line can
// (-interval 2s alone runs, with a timeout of 1.2 s; -interval 2s
// -timeout 3s is refused). At their flags' defaults, the fractions give
// the defaults themselves: 3/5 of 5 s, 2/3 of 15 s, 1/5 of 10 s.
var followers = []struct {
	name, of string        // the flag that follows, the flag it follows
	def      time.Duration // its default
	num, den time.Duration // the fraction of -of
	value    func(f *flags) (follower, followed *time.Duration)
}{
	{"timeout", "interval", DefaultTimeout, 3, 5, func(f *flags) (*time.Duration, *time.Duration) {
		return &f.base.Timeout, &f.base.Interval
	}},
	{"leader-elect-renew-deadline", "leader-elect-lease-duration", election.DefaultRenewDeadline, 2, 3, func(f *flags) (*time.Duration, *time.Duration) {
		return &f.election.RenewDeadline, &f.election.LeaseDuration
	}},
	// Less than the renew deadline divided by client-go's JitterFactor,
	// 1.2, with room to spare, as the defaults 2 s and 10 s.
	{"leader-elect-retry-period", "leader-elect-renew-deadline", election.DefaultRetryPeriod, 1, 5, func(f *flags) (*time.Duration, *time.Duration) {
		return &f.election.RetryPeriod, &f.election.RenewDeadline
	}},
}

// following is def, or num/den of of when that is less, cut to the
// millisecond when it is one or more. It cannot overflow.
func following(def, of, num, den time.Duration) time.Duration {
	d := min(def, of/den*num+of%den*num/den)
	if d >= time.Millisecond {
		d = d.Truncate(time.Millisecond)
	}
	return d
}

// given is the set of flags given on the command line.
func (f *flags) given() map[string]bool {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	return given
}

// follow sets each of [followers] not given on the command line. The
// error names the flag given whose value is too short to leave any value
// to a flag that follows it.
func (f *flags) follow() error {
	given := f.given()
	source := map[string]string{} // the flag given that each derived one comes from
	for _, fl := range followers {
		value, of := fl.value(f)
		if given[fl.name] {
			continue
		}
		source[fl.name] = fl.of
		if s, ok := source[fl.of]; ok {
			source[fl.name] = s
		}
		*value = following(fl.def, *of, fl.num, fl.den)
		if *value <= 0 && *of > 0 {
			// Zero or less in the flag followed is its own flag's error.
			s := source[fl.name]
			return flagError(s, f.fs.Lookup(s).Value, "too short: -%s, which follows it, would be %s", fl.name, *value)
		}
	}
	return nil
}

// flagError is a flag whose value cannot work, said as the flag package
// says it of a value it cannot parse.
func flagError(name string, value any, format string, args ...any) error {
	return fmt.Errorf("invalid value %q for flag -%s: %s", fmt.Sprint(value), name, fmt.Sprintf(format, args...))
}

// asFlagError says a *SettingError (the provider's, or its election's)
// under its flag's name.
func asFlagError(err error, names map[string]string) error {
	var s *vnode.SettingError
	if errors.As(err, &s) {
		if name, ok := names[s.Setting]; ok {
			return flagError(name, s.Value, "%s", s.Problem)
		}
	}
	return err
}

// settings checks the flags, and args, what follows them, and returns the
// configuration of each node, and the election, or nil without
// -leader-elect. The error names the first flag that cannot work.
func (f *flags) settings(args []string) ([]vnode.Config, *election.Election, error) {
	if err := f.follow(); err != nil {
		return nil, nil, err
	}
	switch {
	case len(args) > 0:
		return nil, nil, fmt.Errorf("unexpected argument %q: every setting is a flag", args[0])
	case f.nodes < 1:
		return nil, nil, flagError("nodes", f.nodes, "want at least one node")
	case f.parts && f.nodes != 1:
		return nil, nil, flagError("nodes", f.nodes, "with -parts, want 1 (or none given): one ping of one plugin serves every part's node")
	case f.nodes > 1 && !strings.Contains(f.node, Index):
		return nil, nil, flagError("node", f.node, "with more than one node, the name must hold %s, the node's index", Index)
	// Zero means the default in a Config; on the command line, the
	// default is written in the flag's own default instead.
	case f.base.Transport.CallTimeout <= 0:
		return nil, nil, flagError("pod-timeout", f.base.Transport.CallTimeout, "want more than zero")
	case f.base.StatusReport <= 0:
		return nil, nil, flagError("status-report", f.base.StatusReport, "want more than zero")
	case f.base.LeaseDuration <= 0:
		return nil, nil, flagError("lease-duration", f.base.LeaseDuration, "want whole seconds, at least one")
	case f.base.Interval > 0 && f.base.Timeout > 0 && f.base.Timeout >= f.base.Interval:
		return nil, nil, flagError("timeout", f.base.Timeout, "want less than -interval %s, so that a ping ends before the next is due", f.base.Interval)
	case f.base.LeaseRenew < 0:
		return nil, nil, flagError("lease-renew", f.base.LeaseRenew, "want more than zero, or zero for a quarter of -lease-duration")
	case f.partGrace <= 0:
		return nil, nil, flagError("part-grace", f.partGrace, "want more than zero")
	}
	if err := f.kubelet.check(); err != nil {
		return nil, nil, err
	}
	if f.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(f.metricsAddr); err != nil {
			return nil, nil, flagError("metrics-addr", f.metricsAddr, "want host:port: %v", err)
		}
	}
	// Two defaults are the machine's, read here rather than when the
	// flags are registered, so that -help and the README's table say what
	// they are, not what they were where the table was written. Given,
	// even empty, each means what it always did.
	given := f.given()
	if !given["kubeconfig"] {
		f.kubeconfig = os.Getenv("KUBECONFIG")
	}
	if !given["leader-elect-id"] {
		f.election.Identity = election.DefaultIdentity()
	}
	base := f.base
	base.Grace, base.NoGrace = f.grace, f.grace == 0
	base.ConnectivityCondition = corev1.NodeConditionType(f.connectivity)
	if f.connectivity == "" {
		return nil, nil, flagError("connectivity-condition", f.connectivity, "want a condition type")
	}
	if f.ephemeralStorage != "" {
		q, err := resource.ParseQuantity(f.ephemeralStorage)
		if err != nil || q.Sign() <= 0 {
			return nil, nil, flagError("ephemeral-storage", f.ephemeralStorage, "want a quantity of bytes more than zero, like 500Gi")
		}
		base.StaticResources = corev1.ResourceList{corev1.ResourceEphemeralStorage: q}
	}
	configs, err := f.configs(base)
	if err != nil {
		return nil, nil, err
	}
	for i := range configs {
		if err := configs[i].Check(); err != nil {
			return nil, nil, asFlagError(err, configFlags)
		}
	}
	// The election's flags are checked without -leader-elect too: a
	// mistake in them is found before a replica is ever started with it.
	e := f.election
	if e.Name == "" {
		e.Name = "pingnode-" + strings.ReplaceAll(f.node, Index, "fleet")
		if f.parts {
			e.Name = strings.ReplaceAll(e.Name, vnode.PartToken, "parts")
		}
	}
	if err := e.Check(); err != nil {
		return nil, nil, asFlagError(err, electionFlags)
	}
	namespace, name, ok := strings.Cut(f.serviceAccount, "/")
	switch {
	case !ok || strings.Contains(name, "/"):
		return nil, nil, flagError("service-account", f.serviceAccount, "want namespace/name")
	case len(validation.IsDNS1123Label(namespace)) > 0:
		return nil, nil, flagError("service-account", f.serviceAccount, "want a namespace: %s", strings.Join(validation.IsDNS1123Label(namespace), "; "))
	case len(validation.IsDNS1123Subdomain(name)) > 0:
		return nil, nil, flagError("service-account", f.serviceAccount, "want a ServiceAccount name: %s", strings.Join(validation.IsDNS1123Subdomain(name), "; "))
	}
	f.saNamespace, f.saName = namespace, name
	if !f.leaderElect {
		return configs, nil, nil
	}
	return configs, &e, nil
}

// access is the rights of the providers of configs, with the election e,
// bound to -service-account: what -print-rbac prints. settings has checked
// the flags.
func (f *flags) access(configs []vnode.Config, e *election.Election) rights.Access {
	return accessFor(f.saNamespace, f.saName, configs, e)
}

// configs are the configurations the flags give, from base: a node for
// each of -nodes, or with -parts one, of the provider of the plugin's
// parts (-node, not given, is then [DefaultPartsNode]).
func (f *flags) configs(base vnode.Config) ([]vnode.Config, error) {
	if !f.parts {
		return Fleet(f.nodes, f.node, f.plugin, base)
	}
	given := f.given()
	if !given["node"] {
		f.node = DefaultPartsNode
	}
	owner := f.partsOwner
	if owner == "" {
		owner = vnode.DefaultOwner(f.node)
		if problems := validation.IsValidLabelValue(owner); len(problems) > 0 && vnode.TemplateProblem(f.node) == "" {
			return nil, flagError("parts-owner", owner, "want a label value: %s; not given, it is -node with %s read as part: give one", strings.Join(problems, "; "), vnode.PartToken)
		}
	}
	base.Parts = &vnode.Parts{Template: f.node, Owner: owner, Grace: f.partGrace}
	base.PluginURL = strings.ReplaceAll(f.plugin, Index, "0")
	return []vnode.Config{base}, nil
}
