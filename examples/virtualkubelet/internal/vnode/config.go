package vnode

import (
	"fmt"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/leases"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/poddata"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/setting"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// FieldManager names this provider's writes in the node's managedFields.
const FieldManager = "pingnode-provider"

// StaticTaintKey is the taint of this provider's static configuration.
const StaticTaintKey = "virtual-node.example.com/site"

// DefaultLeaseDuration is the duration of the node's Lease, the kubelet's;
// the Lease is renewed every quarter of it (10 s), as the kubelet does.
const DefaultLeaseDuration = 40 * time.Second

// DefaultStartRetry is how a node whose start failed (its registration
// refused, the API server unreachable, its caches not synced) is started
// again: after 1 s, then twice as long each time up to a minute, each
// wait stretched at random by up to half, so that a fleet that failed
// together does not retry in step.
var DefaultStartRetry = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: 7, Cap: time.Minute}

// Config is what the provider is told at start.
type Config struct {
	// Static is the node as configured: name, labels, capacity, and the
	// taints of the static configuration (the protected one among them).
	Static *corev1.Node
	// StaticResources are resources, such as ephemeral-storage, that
	// [Fleet] adds to the capacity and allocatable of each node's Static
	// (-ephemeral-storage), since StaticNode does not advertise them; the
	// plugin's figures replace them. A Config built by hand puts them in
	// Static itself.
	StaticResources corev1.ResourceList
	// LabelNamespaces are the namespaces, besides node-feature-discovery's,
	// in which the plugin may set the node's labels
	// (pingstatus.Options.LabelNamespaces), such as nvidia.com. The
	// static node's own labels are the provider's: no plugin may set them.
	LabelNamespaces []string
	// StaticKeys are the keys of the static taints besides the default
	// protected one; no plugin may set or remove them.
	StaticKeys []string
	// PluginURL is the plugin's status endpoint: http://, https://, or
	// unix:///path/to/plugin.sock.
	PluginURL string
	// Transport is the rest of how the plugin is reached: a CA file, a
	// client certificate, a token file, the HTTP path on a Unix socket.
	// Its URL, Timeout and MaxBodyBytes are not used: PluginURL, Timeout
	// and the library's options give them.
	Transport pingclient.Config
	// Interval is how often the plugin is pinged; Timeout bounds one ping.
	// Both are more than zero. A ping that outlasts the interval delays
	// the next one; the command line wants the timeout less than the
	// interval, so that pings keep their pace.
	Interval, Timeout time.Duration
	// StatusReport is how often the status of a steady node is written
	// (see report.go); zero means [DefaultStatusReport]. A change is
	// written at once.
	StatusReport time.Duration
	// LeaseDuration is the duration of the node's Lease in kube-node-lease
	// (whole seconds); zero means [DefaultLeaseDuration]. LeaseRenew is how
	// often it is renewed; zero means a quarter of the duration.
	LeaseDuration, LeaseRenew time.Duration
	// Compat is interLink 0.6.2's taint rule.
	Compat bool
	// Grace is how long the plugin may fail to answer before Ready turns
	// False; zero means nodeapply.DefaultGrace. NoGrace turns Ready False
	// at the first failed ping instead.
	Grace   time.Duration
	NoGrace bool
	// Unreachable is what the node says once the plugin has not answered
	// for the grace (nodeapply.Options.Unreachable): Ready False, the
	// default, or the taint pingnode.io/plugin-unreachable:NoSchedule,
	// which keeps running pods; with the latter, NotReadyAfter turns
	// Ready False after all once the plugin has not answered for that
	// long (zero: never).
	Unreachable   nodeapply.Unreachable
	NotReadyAfter time.Duration
	// ConnectivityCondition is the type of the condition that says whether
	// the plugin answered its last ping; empty means
	// nodeapply.DefaultConnectivityCondition.
	ConnectivityCondition corev1.NodeConditionType
	// CountHeld reads the plugin's figures as what the backend has
	// available now, and adds what this node's running pods hold (see
	// heldBy). Off, the figures are written as they are (interLink's
	// rule), for a plugin that reports the total the backend gives the
	// node.
	CountHeld bool
	// DRADriver is the Dynamic Resource Allocation driver under whose name
	// the node's devices are published (-dra-driver): a lowercase DNS
	// subdomain of at most 63 characters that the vendor owns, such as
	// gpu.example.com. The pool is named after the node (devices.go).
	// Empty, the default: no device is published, and a reply's devices
	// are ignored, said once in the log.
	DRADriver string
	// Confirm, ConfirmDeadline (zero: confirm.DefaultDeadline) and
	// PartPin ("annotation=flag"): the backend's confirmation (confirmsetting.go; internal/supervise).
	Confirm         bool
	ConfirmDeadline time.Duration
	PartPin         string
	// Kubelet is where the process serves the kubelet API of its nodes
	// (kubectl logs), which each node publishes; zero, none.
	Kubelet KubeletEndpoint
	// Process is what the nodes of one process share, which the process
	// sets; its zero value, each node and each supervisor keeps its own.
	Process Process
	// StartRetry is how a start that failed is tried again (see
	// [Node.RunRetrying]); zero means [DefaultStartRetry].
	StartRetry wait.Backoff
	// Metrics are where the provider counts its pings and writes; nil
	// counts them in metrics that no registry serves.
	Metrics *metrics.Metrics
	// Parts, when set, is the configuration of a provider that serves its
	// plugin's parts (-parts, parts.go): one ping of the plugin serves a
	// node for each part, named by Parts.Template. Static is nil then,
	// but in the configuration of each part's node, which has part set.
	Parts *Parts
	// Part is the part whose node this is; "" for a node of its own.
	Part string
}

// Process is what the nodes of one process share: a fleet's, set by the
// command, or a provider of parts', set by its supervisor. A nil field,
// each node (or supervisor) keeps its own.
type Process struct {
	// Claims is the cache of ResourceClaims of every node.
	Claims *caches.Claims
	// Waiting is the cache of the pods not bound to a node, with Confirm.
	Waiting corev1listers.PodLister
	// Caches are the caches of the nodes and the pods that the parts'
	// nodes share, their supervisor's (caches.Owned).
	Caches *caches.Caches
	// Events is the event broadcaster of the parts' nodes, their
	// supervisor's.
	Events record.EventBroadcaster
	// Leases renews the Leases of every node.
	Leases *leases.Renewer
	// Registering holds a place for each new part's node registering
	// (registrars); nil, no bound.
	Registering chan struct{}
	// Data reads, as each node, what the pods bound to it use from the
	// cluster (poddata.NodeSource); nil, nothing is read, and pods are
	// sent without their data.
	Data func(node string) (poddata.Source, error)
}

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

// A SettingError is a setting of a [Config] that cannot work, or of its
// election; the command line reports it under its flag's name.
type SettingError = setting.Error

// settingError is the SettingError of a setting.
var settingError = setting.Errorf

// Check returns the first setting of c that cannot work, as a
// *SettingError.
func (c *Config) Check() error {
	if c.Parts != nil {
		if err := c.Parts.check(); err != nil {
			return err
		}
	}
	switch {
	case c.Static == nil && c.Parts == nil:
		return settingError("Static", "<nil>", "want the node to register")
	case c.Static != nil && len(validation.IsDNS1123Subdomain(c.Static.Name)) > 0:
		return settingError("Static.Name", c.Static.Name, "want a node name: %s", strings.Join(validation.IsDNS1123Subdomain(c.Static.Name), "; "))
	case c.Interval <= 0:
		return settingError("Interval", c.Interval, "want more than zero")
	case c.Timeout <= 0:
		// No deadline would let a plugin that hangs stall the ping loop,
		// while the Lease still says the node is alive.
		return settingError("Timeout", c.Timeout, "want more than zero")
	case c.StatusReport < 0:
		return settingError("StatusReport", c.StatusReport, "want zero (the default) or more")
	case c.Grace < 0:
		return settingError("Grace", c.Grace, "want zero or more")
	case c.NotReadyAfter < 0 || c.NotReadyAfter > 0 && c.Unreachable != nodeapply.UnreachableNoSchedule:
		return settingError("NotReadyAfter", c.NotReadyAfter, "want zero or more, with the unreachable policy NoSchedule")
	}
	if err := c.confirmProblem(); err != nil { // confirmsetting.go
		return err
	}
	if problems := validation.IsQualifiedName(string(c.ConnectivityCondition)); c.ConnectivityCondition != "" && len(problems) > 0 {
		return settingError("ConnectivityCondition", c.ConnectivityCondition, "want a condition type: %s", strings.Join(problems, "; "))
	}
	switch c.ConnectivityCondition {
	case corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
		return settingError("ConnectivityCondition", c.ConnectivityCondition, "want a type of its own: the provider sets %s itself", c.ConnectivityCondition)
	}
	if problem := driverProblem(c.DRADriver); problem != "" {
		return settingError("DRADriver", c.DRADriver, "want a driver name: %s", problem)
	}
	for _, ns := range c.LabelNamespaces {
		if problem := pingstatus.LabelNamespaceProblem(ns); problem != "" {
			return settingError("LabelNamespaces", ns, "want a namespace a plugin's labels may have: %s", problem)
		}
	}
	t := c.transport()
	if err := t.Validate(); err != nil {
		return err // it names the flags
	}
	_, _, err := c.Lease()
	return err
}

// driverProblem says why name is not a DRA driver's name, as the API
// server validates a ResourceSlice's spec.driver, or returns "" when it
// is one, or empty (no driver).
func driverProblem(name string) string {
	if name == "" {
		return ""
	}
	problems := validation.IsDNS1123Subdomain(name)
	if len(name) > resourcev1.DriverNameMaxLength {
		problems = append(problems, fmt.Sprintf("must be no more than %d characters", resourcev1.DriverNameMaxLength))
	}
	return strings.Join(problems, "; ")
}

func (c *Config) statusReport() time.Duration {
	if c.StatusReport <= 0 {
		return DefaultStatusReport
	}
	return c.StatusReport
}

func (c *Config) startRetry() wait.Backoff {
	if c.StartRetry == (wait.Backoff{}) {
		return DefaultStartRetry
	}
	return c.StartRetry
}

// Lease returns the Lease's duration in seconds and its renew interval.
func (c *Config) Lease() (int32, time.Duration, error) {
	duration := c.LeaseDuration
	if duration == 0 {
		duration = DefaultLeaseDuration
	}
	if duration < time.Second || duration%time.Second != 0 || duration/time.Second > math.MaxInt32 {
		return 0, 0, settingError("LeaseDuration", duration, "want whole seconds, at least one")
	}
	renew := c.LeaseRenew
	if renew == 0 {
		renew = duration / 4
	}
	if renew <= 0 || renew >= duration {
		return 0, 0, settingError("LeaseRenew", c.LeaseRenew, "want more than zero and less than the lease duration %s", duration)
	}
	return int32(duration / time.Second), renew, nil
}
