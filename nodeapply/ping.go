package nodeapply

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/pingstatus"
)

// Ping is one ping of the plugin, what [Apply] merges into a node: when it
// was made, whether the plugin answered, and what it said.
type Ping struct {
	// Reply is the plugin's parsed reply (see [pingstatus.Parse]). Nil is a
	// reply with no news, unless Body holds one, which [Judge] parses. It
	// is ignored when Failure is set.
	Reply *pingstatus.NodePatch
	// Failure, when not empty, says that the plugin did not answer: a
	// transport error, a timeout, or an HTTP status other than 200. It is
	// a short description that stays the same while the plugin fails the
	// same way ("timeout after 3s", "connection refused", "HTTP 503"),
	// never a reply body: it goes into a condition's message, and a message
	// that changed on every ping would make every ping a write. Apply cuts
	// it to [MaxFailureBytes] and replaces control characters and invalid
	// UTF-8.
	Failure string
	// At is when the ping was made. The conditions' times are At to the
	// second, as the API server stores them. A zero At leaves the
	// conditions alone: only the reply is merged (a checker looking at a
	// saved reply, say).
	At time.Time
	// Body is the reply's bytes: parsed by [Judge] when Reply is nil, and
	// kept by [Options.KeepPingResponse].
	Body []byte
	// Held is what the provider's own pods hold on the backend: the sum of
	// the requests of the pods bound to this node that the backend was
	// already running when it made the reply, those for which
	// [RunsOnBackend](pod, At) reports true (cpu, memory, extended
	// resources, and their number as "pods"). With it, the reply's figures
	// are read as what the backend has available now, and Apply writes
	// available + held: the scheduler subtracts the requests of the pods
	// bound to the node itself, so without it they would count twice. A
	// pod started since the reply is not yet in the reply's figures and
	// must not be in Held either, or the node would claim room the backend
	// does not have for one interval. Held for a resource the reply does
	// not name changes nothing; nil Held keeps the reply's figures as they
	// are, and so does a reply that says its figures are the total
	// ([pingstatus.BasisTotal]).
	Held corev1.ResourceList
	// Unlisted says that the plugin answered, and its reply lists the
	// backend's parts ([pingstatus.NodePatch.ReplaceParts]) without this
	// node's part: the part has left the backend. Reply is then nil (one
	// given is ignored, with a warning, and so is Held). Apply puts
	// [PartGoneTaintKey]:NoSchedule on the node at once, keeps Ready
	// through [Options.PartGrace], then turns it False
	// ([ReasonPartGone]); the next answered ping without Unlisted removes
	// the taint. With Failure set, Unlisted is ignored with a warning: a
	// failed ping says nothing of the parts. Package parts says when to
	// ping a part's node so.
	Unlisted bool
}

// Reached reports whether the plugin answered the ping.
func (p Ping) Reached() bool { return p.Failure == "" }

// Judge returns ping with its reply as the library takes it, and the
// warnings of that judgement: the one gate between a ping and a merge,
// which [Apply], devicepool.Apply and parts.Step each pass the ping they
// are given through. The reply of a ping the plugin answered is Reply
// judged by opts ([pingstatus.Options.Check]: one that Parse or Check
// gave comes back as it is, at no cost), or, with Reply nil, Body parsed
// ([pingstatus.Parse]). A failed ping comes back as it is. A provider
// that pings calls Judge once, logs its warnings, and hands the ping it
// returns on, so that the reply is read once whatever takes it; the
// options are those of the reply, [Options.Reply]. Judge never modifies
// the reply it is given.
func Judge(ping Ping, opts pingstatus.Options) (Ping, []pingstatus.Warning) {
	if !ping.Reached() {
		return ping, nil
	}
	var warnings []pingstatus.Warning
	if ping.Reply == nil && ping.Body != nil {
		patch, w := pingstatus.Parse(ping.Body, opts)
		ping.Reply, warnings = &patch, w
		return ping, warnings
	}
	ping.Reply, warnings = opts.Check(ping.Reply)
	return ping, warnings
}

// Condition types, reasons and messages that Apply writes. The reasons of
// the connectivity condition are interLink's, so that dashboards built on
// them keep working.
const (
	// DefaultConnectivityCondition is the type of interLink's connectivity
	// condition, the default of [Options.ConnectivityCondition].
	DefaultConnectivityCondition corev1.NodeConditionType = "InterlinkConnectivity"
	// ReasonPingSuccessful and ReasonPingFailed are the reasons of the
	// connectivity condition: the last ping was answered, or not.
	ReasonPingSuccessful = "InterlinkPingSuccessful"
	ReasonPingFailed     = "InterlinkPingFailed"
	// ReasonPluginReachable is the reason of Ready True.
	ReasonPluginReachable = "PluginReachable"
	// ReasonPluginUnreachable is the reason of Ready False: the plugin has
	// not answered for the grace period.
	ReasonPluginUnreachable = "PluginUnreachable"
	// ReasonPluginNotReached is the reason of Ready Unknown, which a node
	// that had no Ready condition gets when its first pings fail.
	ReasonPluginNotReached = "PluginNotReached"
	// ReasonPluginUnreachableKeepingPods is the reason of Ready True while
	// the plugin has not answered for the grace, under
	// [UnreachableNoSchedule]: the node keeps its running pods, and the
	// [UnreachableTaintKey] taint keeps new ones away.
	ReasonPluginUnreachableKeepingPods = "PluginUnreachableKeepingPods"
	// ReasonPartGone is the reason of Ready False on a part's node whose
	// part the plugin's reply has not listed for [Options.PartGrace], and
	// of Ready Unknown before then on such a node that had no Ready.
	ReasonPartGone = "PartGone"
	// ReasonVirtualNode is the reason of MemoryPressure, DiskPressure,
	// PIDPressure and NetworkUnavailable False, set with
	// [Options.VirtualNodeConditions]: the node is virtual, and its
	// backend manages its own pressure and network.
	ReasonVirtualNode = "VirtualNode"

	// DefaultGrace is how long the plugin may fail to answer before Ready
	// turns False: the node lifecycle controller's default
	// node-monitor-grace-period, the time Kubernetes gives a kubelet that
	// stops reporting. At interLink's 30 s ping interval, one or two lost
	// pings never flip Ready, and the third failure in a row, 60 s after
	// the first, does.
	DefaultGrace = 50 * time.Second

	// MaxFailureBytes bounds the failure description in a message.
	MaxFailureBytes = 128

	// PingResponseAnnotation is interLink's annotation with the body of
	// the last reply, written only with [Options.KeepPingResponse].
	PingResponseAnnotation = "interlink.virtual-kubelet.io/ping-response"
	// MaxPingResponseBytes bounds that annotation's value.
	MaxPingResponseBytes = 512
)

// The messages. They hold nothing that changes from one ping to the next
// while the outcome stays the same, so a steady node is never rewritten.
const (
	messagePingSuccessful  = "the plugin answered its last ping"
	messagePingFailed      = "the plugin did not answer its last ping: "
	messagePluginReachable = "the plugin answers its pings"
	messageUnreachable     = "the plugin has not answered since "
	messageNotReached      = "the plugin has not answered yet: "
	messageKeepingPods     = "running pods are kept and new ones wait (taint " + UnreachableTaintKey + ":NoSchedule); the plugin has not answered since "
	messagePartGone        = "the plugin's reply has not listed this part since "
	messageVirtualPressure = "the node is virtual and its backend manages its own pressure"
	messageVirtualNetwork  = "the node is virtual and its backend manages its own network"
)
