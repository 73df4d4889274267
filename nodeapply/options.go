package nodeapply

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/pingstatus"
)

// DefaultOwnershipAnnotation is the annotation in which Apply records the
// taints the plugin set, so that it removes only those, across provider
// restarts; [Options.OwnershipAnnotation] names another.
const DefaultOwnershipAnnotation = "pingnode.io/plugin-taints"

// DefaultLabelOwnershipAnnotation is the annotation in which Apply
// records the labels the plugin set; [Options.LabelOwnershipAnnotation]
// names another.
const DefaultLabelOwnershipAnnotation = "pingnode.io/plugin-labels"

// DefaultProtectedKey is the taint key of interLink's provider, which Apply
// never touches.
const DefaultProtectedKey = pingstatus.DefaultProtectedKey

// Options change how [Apply] merges. The zero value is the safe default.
// Every setting is given once: the reply's options are part of them, and a
// [Result] builds its own patches with the options it was made with.
type Options struct {
	// Reply are the options of reading the plugin's reply: parse it with
	// [pingstatus.Parse](body, opts.Reply), and read at most
	// opts.Reply.ReadLimit() bytes of it. Their ProtectedKeys are the
	// provider's own taint keys, besides [DefaultProtectedKey]: no plugin
	// may set them, and Apply never adds, changes or removes a taint with
	// one of them. The device pool's step (package devicepool) is given
	// them too.
	Reply pingstatus.Options
	// OwnershipAnnotation is the key of the annotation in which Apply
	// records the taints the plugin set; empty means
	// [DefaultOwnershipAnnotation].
	OwnershipAnnotation string
	// LabelOwnershipAnnotation is the key of the annotation in which
	// Apply records the labels the plugin set; empty means
	// [DefaultLabelOwnershipAnnotation]. Which labels a plugin may set at
	// all is said in Reply: its LabelNamespaces and ProtectedLabels.
	LabelOwnershipAnnotation string
	// ReplaceAllTaints is interLink 0.6.2's rule: when the patch carries
	// taints, every taint but the protected ones is replaced by the plugin's
	// list, including an administrator's and the Kubernetes controllers'.
	// The default removes only the taints the plugin set.
	ReplaceAllTaints bool

	// ConnectivityCondition is the type of the condition that says whether
	// the last ping was answered; empty means
	// [DefaultConnectivityCondition], interLink's, so that dashboards and
	// alerts built on it keep working.
	ConnectivityCondition corev1.NodeConditionType
	// Grace is how long the plugin may fail to answer before the node
	// stops taking new pods: Ready turns False, or, with
	// [UnreachableNoSchedule], the node gets the [UnreachableTaintKey]
	// taint. Zero or less means [DefaultGrace].
	Grace time.Duration
	// NoGrace ends the grace at the first failed ping, as interLink 0.6.2
	// does; Grace is then not used.
	NoGrace bool
	// Unreachable is what the node says once the plugin has not answered
	// for the grace: [UnreachableNotReady] (the zero value: Ready False, so
	// the node lifecycle controller taints the node NoExecute and running
	// pods are evicted after their toleration) or [UnreachableNoSchedule]
	// (Ready stays True and pingnode's own NoSchedule taint keeps new pods
	// away, so running pods stay).
	Unreachable Unreachable
	// NotReadyAfter, with [UnreachableNoSchedule], turns Ready False after
	// all once the plugin has not answered for this long (counted, like the
	// grace, from the first failed ping; a time shorter than the grace
	// counts as the grace). Zero or less means never.
	NotReadyAfter time.Duration
	// HeartbeatInterval, when positive, refreshes the lastHeartbeatTime of
	// the conditions Apply sets when it is older than this, as the kubelet does.
	// Leave it zero under the Virtual Kubelet node controller, which
	// refreshes every heartbeat itself on its own interval: then a
	// condition's heartbeat moves only when the condition changes, and a
	// steady node is never rewritten.
	HeartbeatInterval time.Duration
	// VirtualNodeConditions also makes every ping with a time ([Ping.At]),
	// answered or failed, set the four conditions that on a real node its
	// kubelet and its network set, and that on a virtual node nobody else
	// does, to False with the reason [ReasonVirtualNode]: MemoryPressure,
	// DiskPressure and PIDPressure (a virtual node has no memory, disk or
	// process table of its own; the backend manages its pressure) and
	// NetworkUnavailable (its pods' network is the backend's). Without
	// it, a condition True or Unknown that another writer left keeps the
	// node lifecycle controller's taint for good: after a provider outage
	// the pressures stay Unknown, and a node interLink left after a failed
	// ping stays NetworkUnavailable, tainted
	// node.kubernetes.io/network-unavailable. They follow the rules of
	// Ready and the connectivity condition: lastTransitionTime moves only
	// when the status does, and a steady node is not rewritten. Off, Apply
	// leaves them alone.
	VirtualNodeConditions bool
	// KeepPingResponse also keeps interLink's [PingResponseAnnotation]:
	// the reply's body, cleaned and cut to [MaxPingResponseBytes], emptied
	// when a ping fails. It costs a write each time the body changes (a
	// plugin that puts a time or a counter in its reply makes every ping a
	// write), so it is off by default.
	KeepPingResponse bool
	// PartGrace is how long a part's node keeps its running pods after
	// the plugin's reply stops listing its part ([Ping.Unlisted]),
	// counted from the time its [PartGoneTaintKey] taint was added: new
	// pods are kept away at once, and after PartGrace Ready turns False,
	// so that the node lifecycle controller evicts the pods by their
	// tolerations, and package parts deletes the node once no pod is
	// bound to it. Zero or less means [DefaultGrace].
	PartGrace time.Duration
}

func (o *Options) connectivity() corev1.NodeConditionType {
	if o.ConnectivityCondition == "" {
		return DefaultConnectivityCondition
	}
	return o.ConnectivityCondition
}

func (o *Options) grace() time.Duration {
	if o.Grace <= 0 {
		return DefaultGrace
	}
	return o.Grace
}

func (o *Options) partGrace() time.Duration {
	if o.PartGrace <= 0 {
		return DefaultGrace
	}
	return o.PartGrace
}

func (o *Options) ownership() string {
	if o.OwnershipAnnotation == "" {
		return DefaultOwnershipAnnotation
	}
	return o.OwnershipAnnotation
}

func (o *Options) labelOwnership() string {
	if o.LabelOwnershipAnnotation == "" {
		return DefaultLabelOwnershipAnnotation
	}
	return o.LabelOwnershipAnnotation
}
