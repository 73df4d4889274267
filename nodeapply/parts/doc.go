// Package parts keeps the nodes of a backend's parts: the machines, or
// partitions of identical machines, that a plugin's reply lists
// ([pingstatus.NodePatch.Parts]), each served by the provider as a node
// of its own. It is the step beside [nodeapply.Apply] for a provider
// that serves parts: at each ping of the plugin, [Step] says what becomes
// of each part's node (registered, pinged, left or deleted), and Apply
// merges into the node the ping that [Decision.NodePing] gives for it. A
// provider that serves one node calls only Apply. Like nodeapply it is
// pure: it never modifies its inputs, keeps no state, reads no clock and
// does no I/O. What it must remember is on the nodes themselves: the
// taint [nodeapply.PartGoneTaintKey], which Apply puts on the node of a
// part the reply no longer lists, says that the part is gone, and the
// time it was added says since when; the pods bound to the node are the
// API server's. A provider that restarts reads both back and carries on.
//
// # How a part leaves
//
// A part's node is not deleted when its part leaves the reply: its pods
// would go with it, since PodGC deletes the pods bound to a node that no
// longer exists, and a part that a reply left out by mistake would lose
// the jobs it runs. The part is left ([Leave]) instead: the provider
// pings its node with [nodeapply.Ping.Unlisted], and Apply taints it
// pingnode.io/part-gone:NoSchedule, so that no new pod lands, and after
// [nodeapply.Options.PartGrace] turns Ready False (reason
// [nodeapply.ReasonPartGone]). The node lifecycle controller then taints
// the node node.kubernetes.io/not-ready:NoExecute (taint-based
// eviction), and evicts each pod on it once its toleration of that taint
// runs out: after 300 s for a pod that sets none, the tolerationSeconds
// that the DefaultTolerationSeconds admission plugin gives it. The
// provider is told to delete each evicted pod, and the backend ends its
// job. Once no pod holds the node, the node is deleted ([Delete]). A
// part that comes back before then keeps its node, and the pods still on
// it.
//
// # The parts contract
//
// [Step](ping, nodes, opts) returns a [Decision] for each part's node
// and each new part:
//
//   - parts-input: nodes are the part's nodes the provider serves now, each
//     with its part's name and the number of its pods ([Node]). The input
//     nodes and ping are never modified. Step reads the ping's Failure, Reply
//     and At; its Held, Body and Unlisted are a node's, and the provider sets
//     them for each node. The decisions are sorted by part, then node name:
//     one for each node given, and a [Register] for each part the reply lists
//     that no node serves. The patch of a decision points into the reply's
//     Parts, not a copy: treat it as read-only.
//   - parts-failed: A failed ping ([nodeapply.Ping.Failure] set) says nothing
//     of the parts: every node gets [Ping] with no patch, which
//     [Decision.NodePing] makes a failed ping of the node. Nothing is
//     registered, left or deleted.
//   - parts-no-news: A reply that does not list parts (nil, or
//     [pingstatus.NodePatch.ReplaceParts] false: a legacy body, "nodes"
//     absent or null, or a list refused whole) is no news of the parts: each
//     node stays as it is. One whose part is gone (it has the part-gone
//     taint, rule parts-gone-taint) stays gone ([Leave]); any other gets
//     [Ping] with no patch. Nothing is registered or deleted.
//   - parts-listed: A reply that lists parts is the backend's whole list. A
//     listed part that a node serves gets [Ping] with its own patch; a gone
//     one comes back so, on the same node with its pods, and Apply removes
//     the part-gone taint at that ping. A listed part that no node serves
//     gets [Register] with its patch: the provider makes it a node, and
//     merges the decision's ping into it before it creates it. A node whose
//     part is not listed gets [Leave], or [Delete] by rule parts-delete. An
//     empty list leaves every part.
//   - parts-incomplete: With [pingstatus.NodePatch.PartsIncomplete] (an entry
//     of the list was refused before its name could be read, so a part
//     missing from it may still be there), the listed parts are handled as in
//     rule parts-listed, but no part leaves and none is deleted: a node whose
//     part is not listed is handled as in rule parts-no-news.
//   - parts-delete: A node whose part is not listed is deleted ([Delete])
//     only when all of these hold: its part-gone taint has a time added (not
//     the zero time, which JSON writes as null); the ping has a time; At is
//     at least [nodeapply.Options.PartGrace] ([nodeapply.DefaultGrace] when
//     zero or less) after the time added, both to the second as Apply reads
//     them, so no earlier than the ping at which Apply turns Ready False; and
//     no pod holds the node ([Node.Pods] is 0; a negative count is no count,
//     and holds it). So a node is never deleted while a pod holds it,
//     whatever the times; nor before a [Leave] has put the taint on it; nor
//     by a ping without a time. A ping time before the time added counts as
//     no time passed: a clock that steps back delays the deletion, never
//     brings it forward.
//   - parts-gone-taint: The part-gone taint is the taint with the key
//     [nodeapply.PartGoneTaintKey] and the effect NoSchedule, as Apply puts
//     it; of several (a node the API server would refuse), the last, which
//     Apply's repair keeps. The same key with another effect is not it. Step
//     reads it, and its grace, by nodeapply's own rule ([nodeapply.PartGone],
//     [nodeapply.Options.PartGraceOver]), so that the two steps never
//     disagree on when a part left.
//   - parts-one-node: Nodes must be unique by part: a provider that names
//     each node after its part has the API server keep them so. Step does not
//     guess which of two nodes of one part is the right one, and deletes
//     neither. Of nodes that share a listed part, the first by node name gets
//     the patch (rule parts-listed), and the others are handled as in rule
//     parts-no-news, for the provider to sort out: pinging them with the
//     patch would offer the part's room to the scheduler twice. The nodes of
//     a part that is not listed are each left or deleted on their own, since
//     none of them is the part's.
//   - parts-order: The reply's parts are read as pingstatus judged them,
//     once: sorted by name, each once, each part's patch judged. A reply that
//     [pingstatus.Parse] gave is taken as it is; any other (a patch built by
//     hand, which may list its parts in another order, a name twice, or a
//     part that breaks a rule) is judged first by [pingstatus.Options.Check],
//     with the reply's options (the Reply of the options), as Parse would
//     have read it: in name order, of a name listed twice the last entry.
//     Step gives no warnings: a provider that builds its patch by hand calls
//     Check itself to see them, and hands on the checked patch. The
//     decisions' patches point into the judged reply.
//   - parts-cost: With nodes given sorted by part, then node name (as Step
//     returns them), and a reply that pingstatus judged, Step allocates the
//     returned list and nothing else, whatever the number of parts: one
//     allocation for a steady ping of 5,000 parts as for 50. Given in another
//     order, it sorts a copy of the nodes first; a reply not yet judged costs
//     its judgement.
//
// # Pods
//
// [Node.Pods] counts the pods bound to the node ("spec.nodeName") that
// are not terminal. A pod that succeeded or failed holds nothing on the
// backend, and does not hold the node: PodGC deletes every pod bound to a
// node that no longer exists, terminal or not. A pod that tolerates
// node.kubernetes.io/not-ready:NoExecute for good (a toleration without
// tolerationSeconds, as DaemonSet pods have) is never evicted, and holds
// the node while it counts; a provider that wants such a node gone leaves
// those pods out of the count, and PodGC deletes them with the node.
package parts
