// Package nodeapply merges one ping of a plugin into a Kubernetes node, and
// gives the patches a provider sends to the API server. A ping is the
// plugin's parsed reply ([pingstatus.NodePatch]), or why the plugin did not
// answer, and the time it was made. The package is pure: it never modifies
// its inputs, keeps no state, reads no clock (the time is passed in) and
// does no I/O. Everything it must remember lives on the node itself, so a
// provider that restarts carries on where it was. Apply is node in, node
// out: the reply's devices, which are not on the node, are the pool's,
// and the step beside Apply, package devicepool, turns them into the
// devices the provider publishes, by rules of its own.
//
// # A ping
//
// A provider builds a [Ping] at each ping of its plugin: the time it made
// it; the reply's bytes (Body), read up to opts.Reply.ReadLimit(); or,
// when the plugin did not answer, the words that package nodeapply/failure
// gives for the HTTP status code or the transport's error (failure.Of):
// short words that stay the same while the plugin fails the same way, and
// never hold a URL, a token or a body. It passes the ping once through
// the gate, [Judge](ping, opts.Reply), which parses the bytes
// ([pingstatus.Parse]) or judges a reply built by hand
// ([pingstatus.Options.Check]), logs the warnings, and hands the judged
// ping on to Apply, devicepool.Apply and parts.Step, which pass it through
// the same gate at no cost (the reply's options are part of [Options], so
// that each setting is given once). The [Result] of [Apply] then gives the
// two patches to send, built with the options Apply was given.
//
// # The merge contract
//
// [Apply](node, ping, options) returns the node after the ping, the
// changes, and warnings:
//
//   - merge-pure: The input node and ping are never modified. When
//     something changed, the returned node is new and shares no memory with
//     the input. When nothing changed, Apply returns the input node itself
//     and an empty list of changes; it then makes no copy, and a reply
//     without taints and labels costs no allocation. Each concern of the
//     node (its resources, its conditions, the taints, pingnode's three
//     taints, the labels, the ping-response annotation, the repair) is one
//     function that both decides whether the node changes and writes the
//     change: it reads the node as the concerns before it left it, and
//     writes into a copy, made at the first write of any concern and shared
//     by the later ones, only where the node is not already as the ping
//     asks. A steady ping is one no concern writes, so it is never copied;
//     the merges of the taints and the labels allocate a few slices and a
//     set of their own, never a copy of the node.
//   - resource-written: Each quantity of the reply is written to both
//     status.capacity and status.allocatable. With [Ping.Held] (what the
//     provider's own pods hold on the backend: those it runs, by
//     [RunsOnBackend]), the reply's quantity is read as what the backend has
//     available now, and written as available + held: the scheduler subtracts
//     the requests of the pods bound to the node itself, so they must not be
//     missing from the figure twice. A held amount that is negative,
//     fractional for a whole-number resource, or that would make the sum too
//     large is refused with a warning, and the reply's figure is written
//     alone, never more. Held for a resource the reply does not name changes
//     nothing, and a reply whose basis is "total" ([pingstatus.BasisTotal])
//     has its figures written as they are. Quantities compare by value: an
//     equal value is no change, and the node keeps its spelling ("512Gi"
//     stays, though the plugin said "549755813888").
//   - omitted-kept: What the patch does not name is left as it is: resources
//     it omits, all taints when it carries no taints list (but pingnode's
//     own, which their rules put and remove), and all labels when it
//     carries no labels (rule label-ownership).
//   - taint-ownership: The plugin owns only the taints it set. Apply records
//     them in the node's ownership annotation ([DefaultOwnershipAnnotation],
//     or [Options.OwnershipAnnotation]; key:Effect entries, comma-separated),
//     so the rule survives provider restarts and Apply stays a function of
//     (node, ping). A taint counts as the plugin's while the annotation lists
//     its key and effect.
//   - taint-replace: When the patch carries a taints list, the plugin's
//     taints are replaced by it: a listed taint the node has keeps its place
//     (and the time it was added) with the new value, a new one is added at
//     the end, and one no longer listed is removed, unless its key is in
//     [pingstatus.NodePatch.KeptTaintKeys] (the plugin's entry for it was
//     refused). An empty list removes every taint the plugin set.
//   - taint-foreign: Taints the plugin did not set are never touched: an
//     administrator's, the Kubernetes controllers' (node.kubernetes.io/* and
//     the like), the provider's static configuration's, and those with a
//     protected key ([DefaultProtectedKey], and the ProtectedKeys of
//     [Options.Reply]). A listed taint equal to one of those in key and
//     effect is already satisfied and does not become the plugin's; if its
//     value differs, the other one stays and a warning says so. pingnode's
//     own three, the unreachable taint, the part-gone taint and the
//     backend-full taint, are never the plugin's: Apply alone puts and
//     removes them, by rules unreachable-taint, part-gone and backend-full.
//   - taint-replace-all: With [Options.ReplaceAllTaints] the rule is
//     interLink 0.6.2's instead: every taint but the protected ones and
//     pingnode's own is replaced by the plugin's list.
//   - change-list: The changes list one entry per changed path, sorted by
//     path, with old and new values (a changed condition has one per changed
//     field, like "status.conditions[Ready].status", and a taint whose time
//     added alone changed has "spec.taints[key:Effect].timeAdded"), each
//     saying what kind of field changed ([Change.Subject]: a resource, a
//     taint, a label, a condition or an annotation). The list is empty
//     exactly when the returned node is semantically equal to the input
//     (quantities by value, taints as a set, each with the second it was
//     added, labels by key), and so exactly when both [Result.ObjectPatch]
//     and [Result.StatusPatch] are nil: an empty list means there is nothing
//     to send to the API server. The object patch carries the taints, the
//     labels and their ownership annotations, with the input's
//     resourceVersion as a precondition; the status patch carries the rest.
//     [Result.NeedsObjectPatch] and [Result.NeedsStatusPatch] say which patch
//     is needed without building it, and [Result.FiguresOnly] whether every
//     change is of a resource's figures, which a provider may hold back for a
//     while, as the kubelet writes a changed status at most every
//     nodeStatusUpdateFrequency (10 s): the next ping finds the change still
//     to make.
//   - condition-set: Each ping with a time ([Ping.At]) sets two conditions:
//     Ready, and the connectivity condition ([Options.ConnectivityCondition],
//     by default interLink's InterlinkConnectivity). With
//     [Options.VirtualNodeConditions] it also sets the four conditions that
//     on a real node its kubelet and its network set, and on a virtual node
//     nobody else does: MemoryPressure, DiskPressure, PIDPressure and
//     NetworkUnavailable, answered or failed, False, reason
//     [ReasonVirtualNode], with a message that the node is virtual and its
//     backend manages its own pressure, or network. (The node lifecycle
//     controller sets the pressures Unknown when the provider is gone;
//     interLink sets NetworkUnavailable True at a failed ping; each keeps its
//     taint until something sets the condition back.) Without the option they
//     are conditions of other types (rule condition-others). Times are At to
//     the second, as the API server keeps them. A ping without a time leaves
//     the conditions alone.
//   - ping-answered: An answered ping sets both True (reasons
//     InterlinkPingSuccessful and PluginReachable), at once, whatever came
//     before, and removes the unreachable taint (rule unreachable-taint) and
//     the part-gone taint (rule part-gone), with or without a time. An
//     Unlisted one ([Ping.Unlisted]) sets the connectivity condition True and
//     removes the unreachable taint too, but leaves Ready and the part-gone
//     taint to rule part-gone.
//   - ping-failed: A failed ping ([Ping.Failure] set) sets the connectivity
//     condition False (InterlinkPingFailed, with the failure in the message).
//     The run of failures began at that condition's lastTransitionTime. The
//     grace ([Options.Grace], [DefaultGrace] 50 s; none with
//     [Options.NoGrace]) ends at the first failed ping at least that long
//     after the run began, so one lost ping never stops scheduling. Before
//     that, Ready stays as it is, or is Unknown (PluginNotReached) on a node
//     that had no Ready. After it, [Options.Unreachable] decides:
//     [UnreachableNotReady] (the default) turns Ready False
//     (PluginUnreachable, its message saying since when);
//     [UnreachableNoSchedule] keeps Ready True
//     ([ReasonPluginUnreachableKeepingPods], the message saying since when)
//     and puts the unreachable taint on the node, and turns Ready False only
//     once the run has lasted [Options.NotReadyAfter], if set. A ping time
//     before the run's start counts as no time passed: a clock that steps
//     back delays the end of the grace by the step, never brings it forward.
//   - unreachable-taint: The unreachable taint, [UnreachableTaintKey] with
//     the effect NoSchedule and no value, is pingnode's own: no plugin may
//     set its key, and Apply adds or removes only that key with that effect.
//     A ping with a time puts it on the node (at the end, once) exactly when
//     it failed after the grace under UnreachableNoSchedule, and removes it
//     otherwise; an answered ping without a time removes it, and a failed one
//     without a time leaves it. Like everything else, it is read from the
//     node, so a provider that restarts carries on.
//   - failure-keeps: A failed ping changes nothing else: resources, the other
//     taints (the part-gone and backend-full taints among them), the labels and the ownership
//     annotations stay, and its Reply, if any, is ignored with a warning (and
//     so is Held). So is [Ping.Unlisted], with a warning of its own: a failed
//     ping says nothing of the parts (rule part-gone).
//   - condition-times: A condition's lastTransitionTime moves only when its
//     status moves. Its lastHeartbeatTime moves when the condition changes,
//     or, with [Options.HeartbeatInterval], when it is older than that.
//     Reasons and messages hold nothing that changes from ping to ping of the
//     same kind, so a steady node is never rewritten. Ready's message, once
//     it says the plugin is unreachable or the part gone, stays until its
//     reason changes.
//   - condition-others: Conditions of other types, and the order of all
//     conditions, are never touched: a condition Apply sets keeps its place,
//     and a new one is added at the end; none is removed (interLink's
//     OutOfDisk, a type Kubernetes no longer reads, stays as it is: it taints
//     nothing, and removing a condition would need a delete directive in the
//     status patch, against a list that other writers share). A node with no
//     conditions gets exactly those the ping sets, in this order: Ready, the
//     connectivity condition, then MemoryPressure, DiskPressure, PIDPressure
//     and NetworkUnavailable.
//   - text-bounded: Text taken from the plugin (the failure; the reply's body
//     in interLink's [PingResponseAnnotation], kept only with
//     [Options.KeepPingResponse] and emptied when a ping fails) is cut at a
//     character boundary ([MaxFailureBytes], [MaxPingResponseBytes]) with a
//     "…" marker, and control characters and invalid UTF-8 are replaced.
//   - node-valid: The returned node always passes the API server's
//     validation of capacity, allocatable and taints. If the input node did
//     not, Apply repairs it to the safe side with a warning for each repair:
//     a negative quantity becomes 0, a fraction of a whole-number resource is
//     rounded down, a taint with an invalid key or value is dropped, an
//     invalid effect becomes NoSchedule, and of a repeated key and effect the
//     last taint is kept. The reply is taken through the gate ([Judge]),
//     once: a patch that [pingstatus.Parse] gave, and did not change since,
//     is trusted as it is, a Body without a Reply is parsed, and any other
//     patch (one built by hand) is judged by [pingstatus.Options.Check] with
//     the options' Reply, its entries that break pingstatus's rules refused
//     with Check's warnings (those about devices are the pool's, package
//     devicepool's). Each warning says what it is about and what was done
//     ([pingstatus.Warning.Subject], [pingstatus.Warning.Action]), and which
//     rule gave it ([pingstatus.Warning.Rule]).
//   - label-ownership: The plugin owns only the labels it set, as it owns its
//     taints. Apply records their keys, sorted and comma-separated, in the
//     label ownership annotation ([DefaultLabelOwnershipAnnotation], or
//     [Options.LabelOwnershipAnnotation]). When the patch carries labels
//     ([pingstatus.NodePatch.ReplaceLabels]), the plugin's labels are
//     replaced by them: a listed label is set to its value, and one no longer
//     listed is removed, unless its key is in
//     [pingstatus.NodePatch.KeptLabelKeys]. An empty set removes every label
//     the plugin set; a patch without labels leaves every label alone, and so
//     does a failed ping.
//   - label-foreign: Labels the plugin did not set are never changed or
//     removed: an administrator's, the provider's, another controller's. A
//     listed label whose key the node has from someone else is refused with a
//     warning when its value differs, and is already satisfied when it is
//     equal; either way it does not become the plugin's. A label outside the
//     namespaces the options allow (the LabelNamespaces of [Options.Reply]),
//     in a namespace no plugin may set, or one of the provider's
//     ProtectedLabels, is refused by pingstatus's judgement of the reply
//     (rule label-namespace); an annotation entry that names one in a
//     namespace no plugin may set, or one of the provider's, is ignored with
//     a warning, so a hand-edited annotation cannot hand the plugin a label
//     that is never its own. A label of the plugin's in a
//     namespace the options no longer allow is still the plugin's, and is
//     removed at its next labels.
//   - part-gone: A ping with [Ping.Unlisted] is one the plugin answered with
//     a reply that lists the backend's parts, but not this node's: the part
//     has left the backend. Its connectivity condition, and what it does to
//     the unreachable taint, are an answered ping's (rule ping-answered), but
//     it puts the part-gone taint on the node, [PartGoneTaintKey] with the
//     effect NoSchedule and no value, at the end, once, added at the ping's
//     time to the second (with no time added for a ping without a time), so
//     that new pods wait at once. A node that has that key with that effect
//     keeps its taint as it is, value and time added, so a node whose part
//     stays unlisted is never rewritten; a taint without a time added gets
//     the ping's. The time added is when the part left, read from the node at
//     each ping, and the part's grace ([Options.PartGrace], [DefaultGrace] by
//     default) ends at the first Unlisted ping at least that long after it.
//     Before that, a Ready True is an answered ping's (rule ping-answered),
//     and any other Ready, or none, is Unknown ([ReasonPartGone]): the plugin
//     answers, so an earlier reason no longer holds; from then on it is False
//     ([ReasonPartGone]), its message saying since when the reply has not
//     listed the part, and the node lifecycle controller evicts the pods by
//     their tolerations. A ping time before the part left counts as no time
//     passed, and a Ready False for the part stays False at an Unlisted ping
//     whatever its time: a clock that steps back into the grace brings no
//     Unknown, which would move the transition time and make the node
//     lifecycle controller swap its not-ready taint for the unreachable one,
//     restarting the pods' tolerations (as a failed ping's Ready stays False,
//     rule ping-failed). An Unlisted ping changes nothing else: resources, the taints
//     but pingnode's own, the labels and the ownership annotations stay (the
//     ping-response annotation is an answered ping's, rule text-bounded), and
//     its Reply, if any, is ignored with a warning (and so is Held). Any
//     other answered ping removes the part-gone taint (that key with that
//     effect only), with or without a time, and Ready is True at once (rule
//     ping-answered); a failed ping leaves it as it is, and one that also
//     says Unlisted is a failed ping, Unlisted ignored with a warning (rule
//     failure-keeps). No plugin may set the key: pingstatus refuses it (rule
//     taint-reserved), in a reply and in a hand-built patch. Like the
//     unreachable taint, it is read from the node, so a provider that
//     restarts carries on.
//   - backend-full: The backend-full taint, [BackendFullTaintKey] with the
//     effect NoSchedule, is pingnode's own: no plugin may set its key
//     (pingstatus refuses it, rule taint-reserved), and Apply adds,
//     changes and removes only that key with that effect. A reply that
//     says the backend has no free cpu or memory now
//     ([pingstatus.NodePatch.Full]: a zero among figures of what it has
//     available, rule resource-full) puts it on the node, at the end,
//     once, its value the resources the backend has none of, joined with
//     "." ("cpu", "memory", "cpu.memory"): no new pod lands, and running
//     pods stay. The zero is not written, so the node keeps its capacity,
//     and nothing is drained. A reply with news of cpu or memory, a figure
//     of either, and no such word removes it; a ping with no news of them
//     (a legacy reply, one without resources, a failed or Unlisted ping)
//     leaves it as it is. A taint of that key and effect whose value the
//     reply changes keeps its place and the time it was added; a new one
//     has no time added. Like the unreachable taint, it is read from the
//     node, so a provider that restarts carries on: the taint stands
//     exactly while the last news of cpu and memory was that the backend
//     had none of one of them free.
//
// One consequence of rule taint-ownership: an administrator who removes the plugin's
// taint and sets one with the same key and effect before the next ping
// gives it to the plugin, since nothing on the node tells the two apart.
// An administrator's own taints should use keys the plugin does not.
//
// Apply sets no TimeAdded on the plugin's new taints, nor on the
// unreachable taint (it has no clock; the conditions say since when), nor
// on the backend-full taint; a provider that wants one sets it on the
// patch's taints. The part-gone
// taint is the one Apply adds with a TimeAdded, the ping's time: it is
// when the part left, from which rule part-gone counts the part's grace.
//
// # What the provider's pods hold
//
// A plugin that reports what its backend has available now already leaves
// out what this node's pods use there: a 64-cpu backend running 32 cpus of
// the node's pods reports 32, the scheduler sees 32 - 32 = 0, and the node
// starves itself as it fills. [Ping.Held] adds those pods back (rule
// resource-written). The provider sums it as the scheduler sums a pod's
// requests (init containers by their largest), for every resource the
// reply names, ephemeral-storage and hugepages-<size> included. Against
// the real kube-scheduler, the same stream of 100 pods fills a 64-cpu
// backend to 100% with Held and to 56% without (TestHeldFill, in
// examples/virtualkubelet).
//
// # When the plugin does not answer
//
// Whatever [Options.Unreachable] says, the connectivity condition tells
// the truth about the plugin, and the node's Lease says whether the
// provider itself lives: when the provider is gone, the node lifecycle
// controller sets Ready Unknown and evicts by the taint
// node.kubernetes.io/unreachable, whatever the policy.
//
// interLink 0.6.2 matches neither policy exactly: at the first failed
// ping it turns Ready False and NetworkUnavailable True, so the node is
// tainted not-ready (NoSchedule and NoExecute) and network-unavailable,
// and every running pod is evicted 300 s after the first lost ping. That
// is [UnreachableNotReady] with [Options.NoGrace]. A Slurm or HTCondor
// backend whose jobs run for days loses them all to a six-minute outage
// of the link between provider and plugin; a provider for such a backend
// wants [UnreachableNoSchedule].
//
// # Taking over from interLink's provider
//
// A provider that adopts pingnode takes the node over as interLink 0.6.2
// left it, in whatever state (examples/adopt is such a provider's module,
// on interLink's Kubernetes). interLink's provider pings every 30 s and
// hands the node to the node controller after every ping; with pingnode
// it hands it on only when [Result.Changes] is not empty. Where interLink
// differs from the defaults:
//
//   - It replaces every taint but virtual-node.interlink/no-schedule with
//     the plugin's list; [Options.ReplaceAllTaints] keeps that. By default
//     the plugin owns only the taints it set (rule taint-ownership): an
//     administrator's kubectl taint and the node lifecycle controller's
//     taints survive a reply.
//   - It stores the raw body in interlink.virtual-kubelet.io/ping-response;
//     [Options.KeepPingResponse] keeps that, cut to [MaxPingResponseBytes].
//     It is off by default: a body that changes makes every ping a node
//     write, and one large body can push the node past the 256 KiB limit
//     of its annotations.
//   - It turns Ready False at the first failed ping, and so evicts every
//     running pod 300 s later; [Options.NoGrace] keeps that. The default
//     grace, 50 s, is the node lifecycle controller's own: one lost ping
//     does not taint the node not-ready and start the eviction clock.
//   - It writes a condition set of its own: Ready (KubeletPending),
//     OutOfDisk, MemoryPressure and DiskPressure False, and
//     NetworkUnavailable, True at a failed ping. With
//     [Options.VirtualNodeConditions], one answered ping takes them over,
//     and the controller lifts its network-unavailable taint; OutOfDisk
//     stays as it is (nothing reads it since Kubernetes 1.13). Without it,
//     the NetworkUnavailable True of interLink's last failed ping keeps the
//     node unschedulable for as long as it lives.
//   - Its connectivity condition, InterlinkConnectivity with the reasons
//     InterlinkPingSuccessful and InterlinkPingFailed, is the default, so
//     dashboards keep working.
//   - It moves lastTransitionTime at every ping, puts the body in the
//     message, and replaces the whole condition list; Apply does none of
//     these (rules condition-times and condition-others).
//   - It accepts cpu "0" and drains the node; pingstatus.Options.AllowZero
//     keeps that. By default a zero among free figures says the backend is
//     full (rule backend-full), and a zero total, pods or scratch space is
//     refused: "take no pods" is a taint.
//   - It writes the figures as they are, as Apply does without
//     [Ping.Held].
//
// pingcheck shows one answered ping on the node that interLink leaves
// after a failed ping (tainted not-ready and network-unavailable by the
// node lifecycle controller): Ready and NetworkUnavailable come back, and
// the controller's taints for these conditions go.
//
//	go run ./examples/pingcheck -node testdata/nodes/interlink-failed-ping.json -virtual-node-conditions -at 2026-11-30T00:00:00Z testdata/replies/slurm.json
package nodeapply
