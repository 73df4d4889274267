// Package nodeapply merges a [pingstatus.NodePatch] into a Kubernetes node,
// and gives the patches a provider sends to the API server. It is pure: it
// never modifies its inputs, keeps no state, reads no clock and does no
// I/O.
//
// # The merge contract
//
// [Apply](node, patch, options) returns the node after the patch, the
// changes, and warnings:
//
//  1. The input node and patch are never modified. When something changed,
//     the returned node is new and shares no memory with the input. When
//     nothing changed, Apply returns the input node itself and an empty
//     list of changes; it then makes no copy and, when the plugin's taints
//     come in the same order as before, no allocation.
//  2. Each quantity of the patch is written to both status.capacity and
//     status.allocatable. Quantities compare by value: an equal value is no
//     change, and the node keeps its spelling ("512Gi" stays, though the
//     plugin said "549755813888").
//  3. What the patch does not name is left as it is: resources it omits,
//     and all taints when it carries no taints list.
//  4. The plugin owns only the taints it set. Apply records them in the
//     node's [OwnershipAnnotation] (key:Effect entries, comma-separated), so
//     the rule survives provider restarts and Apply stays a function of
//     (node, patch). A taint counts as the plugin's while the annotation
//     lists its key and effect.
//  5. When the patch carries a taints list, the plugin's taints are
//     replaced by it: a listed taint the node has keeps its place (and the
//     time it was added) with the new value, a new one is added at the end,
//     and one no longer listed is removed, unless its key is in
//     [pingstatus.NodePatch.KeptTaintKeys] (the plugin's entry for it was
//     refused). An empty list removes every taint the plugin set.
//  6. Taints the plugin did not set are never touched: an administrator's,
//     the Kubernetes controllers' (node.kubernetes.io/* and the like), the
//     provider's static configuration's, and those with a protected key
//     ([DefaultProtectedKey], [Options.ProtectedKeys]). A listed taint equal
//     to one of those in key and effect is already satisfied and does not
//     become the plugin's; if its value differs, the other one stays and a
//     warning says so.
//  7. With [Options.ReplaceAllTaints] the rule is interLink 0.6.2's instead:
//     every taint but the protected ones is replaced by the plugin's list.
//  8. The changes list one entry per changed path, sorted by path, with old
//     and new values. It is empty exactly when the returned node is
//     semantically equal to the input (quantities by value, taints as a
//     set), so an empty list means there is nothing to send.
//  9. The returned node always passes the API server's validation of
//     capacity, allocatable and taints. If the input node did not, Apply
//     repairs it to the safe side with a warning for each repair: a
//     negative quantity becomes 0, a fraction of a whole-number resource is
//     rounded down, a taint with an invalid key or value is dropped, an
//     invalid effect becomes NoSchedule, and of a repeated key and effect
//     the last taint is kept. Entries of a hand-built patch that break the
//     rules are refused with a warning, as [pingstatus.Parse] would.
//
// One consequence of rule 4: an administrator who removes the plugin's
// taint and sets one with the same key and effect before the next ping
// gives it to the plugin, since nothing on the node tells the two apart.
// An administrator's own taints should use keys the plugin does not.
//
// Apply sets no TimeAdded on new taints (it has no clock); a provider that
// wants one sets it on the patch's taints.
package nodeapply
