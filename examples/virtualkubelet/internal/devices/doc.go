// Package devices publishes a node's pool of Dynamic Resource Allocation
// devices: a [Publisher] runs, for one node, the ResourceSlice controller
// of k8s.io/dynamic-resource-allocation (resourceslice), the one DRA
// drivers run, and hands it each pool the provider reads of a ping.
//
// The controller is handed the pool and writes it as the ResourceSlices of
// one pool of the driver, named after the node: it creates, updates and
// deletes slices, bumps the pool's generation when more than one slice
// changes, and retries what the API server refused, with backoff. Its
// owner is the Node, so its slices carry the node's name (spec.nodeName:
// the scheduler offers them on that node alone) and the garbage collector
// deletes them with the node. A node deleted and registered again is
// another owner ([Publisher.Publish] is told its UID), and gets a
// controller of its own: the pool is published again once the garbage
// collector has deleted the old slices, within the controller's 30 s delay
// after the event that says so.
//
// A controller started with no pool deletes the pool's slices: so none is
// started before a reply carried devices (the first [Publisher.Publish]
// starts it, with its pool), and a plugin that never sends any leaves what
// is published alone. The controller compares the pool with the slices it
// reads from its own informer and writes only what differs: a provider
// that restarts and is handed the same pool writes nothing. Which pool is
// news, and so handed on, is the provider's to say.
//
// The pool is split into slices the API server takes ([DriverResources]):
// at most 128 devices a slice ([resourcev1.ResourceSliceMaxDevices]), and
// at most 64 ([resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures]) in
// every slice of a pool with any tainted device, in the pool's order; a
// pool with no device is one empty slice, which says that the driver runs
// and has none.
//
// An error of the controller is counted (pingnode_device_publish_errors_total,
// through [metrics.Node]) each time, and logged when it begins or changes,
// not at every retry.
package devices
