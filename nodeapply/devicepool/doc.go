// Package devicepool turns the devices of a plugin's reply into the
// node's pool: the devices a provider publishes beside the node, as
// Dynamic Resource Allocation devices in ResourceSlices (the nested module
// nodeapply/dra writes and reads those). It is the step beside
// [nodeapply.Apply], which merges the same ping into the node: a provider
// that publishes devices calls both with the same [nodeapply.Ping], and
// one that does not calls only Apply and pays nothing for a plugin that
// sends devices. Like nodeapply it is pure: it never modifies its inputs,
// keeps no state, reads no clock and does no I/O. What it must remember
// is in the pool itself, as published, and in which devices claims hold;
// a provider that restarts reads both back from the API server
// (dra.Pool) and carries on.
//
// # The pool contract
//
// [Apply](pool, ping, opts) returns the pool after the ping, its changes
// and warnings:
//
//   - pool-input: pool is the pool as the provider publishes it now, with the
//     devices that claims hold marked ([Device.Held]) and, of those, the ones
//     held for a pod the backend runs ([Device.Running], by
//     [nodeapply.RunsOnBackend], as [nodeapply.Ping.Held] counts pods): a
//     device that a claim's allocation names is in it, held, even if it is
//     not published now. A patch without devices
//     ([pingstatus.NodePatch.ReplaceDevices] false), and a failed ping, leave
//     the pool as it is.
//   - pool-groups: A group of the patch is published as devices named after
//     it, group-0, group-1, and so on. Every device of a group, held or not,
//     is as the group describes it: its attributes, its capacity, and its
//     taints in order (what is wrong with the device; NoSchedule keeps it
//     from new claims, NoExecute evicts the pods using it).
//   - pool-held: What the backend's count already holds is read as for
//     resources (nodeapply's rule resource-written): a count read as
//     available (the default) still includes the devices held for pods the
//     backend does not run yet, and one read as a total
//     ([pingstatus.BasisTotal]) includes every held device; those come out of
//     the count. Every device of the group that a claim holds is published,
//     whatever the count (a held device is never dropped while its group is
//     listed), and so are as many of those no claim holds as the count has
//     left (never below zero), the ones with the lowest indices. Of a group
//     of count n with h devices held, r of them for pods the backend runs,
//     that is max(h, r+n) devices read as available, and max(h, n) read as a
//     total: a device counts once, held or free, never both, so the scheduler
//     is never offered it twice.
//   - pool-names: A device keeps its name from one reply to the next, so an
//     allocation keeps pointing at the same device; when the count falls, the
//     free devices with the highest indices go.
//   - pool-kept: A group in [pingstatus.NodePatch.KeptDeviceGroups] (its
//     entry was refused) keeps its devices as they are; the devices of groups
//     no longer listed are removed, held or not (the scheduler allocates a
//     device again only once its claim's allocation is gone). An empty list
//     removes every device.
//   - pool-judged: The patch's devices are read as pingstatus judged them,
//     once: a patch that [pingstatus.Parse] gave is taken as it is, and any
//     other is judged by [pingstatus.Options.Check] with the options the
//     reply was parsed with, the one implementation of their rules: of a
//     group named twice the last, the groups in name order, and over the
//     limits no devices (the pool left as it is), with a warning. A group of
//     a hand-built patch that Parse would refuse is refused with a warning,
//     its devices left as they are. Of that judgement's warnings, Apply gives
//     those about devices; nodeapply's Apply gives the others.
//   - pool-order: A pool that Apply builds is sorted by group, then index
//     ([Compare]); of a name the pool gives twice the first counts, and a
//     device whose name is not group-index is removed. Each device added,
//     removed or described anew (an attribute, a capacity's value, or a
//     taint's key, value, effect or place changed) is a change in
//     [Result.Changes] ([pingstatus.SubjectDevice], path devices[name],
//     sorted by path); whether a claim holds a device, or its pod runs, is
//     not published and is no change. No change means nothing to publish:
//     then [Result.Devices] is the pool itself, in the order it was given.
//   - pool-engine: One engine builds the pool, for a steady ping and a change
//     alike: it writes the pool device by device and copies nothing while the
//     devices are the input's, in its order, described the same. A pool given
//     in the order Apply keeps, as the last Result left it, costs no copy and
//     no allocation when nothing changed. A new pool keeps the input's
//     devices up to the first that differs, and the devices after it share
//     their attributes, capacity and taints with the patch's groups:
//     read-only.
package devicepool
