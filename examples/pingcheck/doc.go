// Command pingcheck shows what a provider would do with a plugin's ping
// reply: the reply's kind, every warning with its JSON path, and the
// changes to the node.
//
//	go run ./examples/pingcheck [flags] [reply-file|-]
//
// With -node, the reply is applied to that node (JSON, as
// "kubectl get node -o json" prints it); without, to an empty one. With
// -o json it prints the node after the reply instead. With -strict, any
// warning makes the exit status 1, so a plugin's CI can run
//
//	curl -s http://plugin/status | pingcheck -strict -
//
// With -at, the reply is a ping made at that time, and the node's Ready and
// connectivity conditions follow it; with -failed, the ping was not
// answered (no reply is read), which shows what a dead backend does to a
// node:
//
//	pingcheck -node node.json -at 2026-11-30T12:01:00Z -failed "HTTP 503"
//
// -unreachable and -not-ready-after choose what the node says once the
// plugin has not answered for the -grace (see nodeapply.Options), and
// -virtual-node-conditions sets the conditions the example provider sets,
// so that a node another provider left can be tried:
//
//	pingcheck -node testdata/nodes/interlink-failed-ping.json -at 2026-11-30T00:00:30Z -unreachable NoSchedule -failed "HTTP 503"
//
// A reply's labels are taken in the namespaces node-feature-discovery
// writes by default (feature.node.kubernetes.io, profile.node.kubernetes.io);
// -label-namespaces allows more, as a provider does for its plugin, and
// -protected-labels names the labels the provider sets itself:
//
//	pingcheck -label-namespaces nvidia.com -node node.json testdata/replies/labels-gpu.json
//
// A reply's devices are shown as the provider would publish them for the
// node: for each group the devices' names, how many, and what they are,
// by the names a claim's CEL reads (device.attributes['gpu.nvidia.com'].productName),
// with its taints; or why the group has none (refused, count 0). A short
// attribute name is read in the driver's domain: -dra-driver names the
// driver, as on the provider, and without it the lines say <driver>:
//
//	pingcheck -dra-driver gpu.nvidia.com testdata/replies/devices-gpus.json
//
// A reply that lists its parts (the backend's machines, "nodes") is shown
// part by part: each part's patch applied to the node, as a provider that
// serves parts applies it to the part's own node; with -o json, the node
// after the reply for each part, by name:
//
//	pingcheck -node node.json testdata/replies/slurm-parts-taints.json
//
// With -url, pingcheck pings a live plugin exactly as the Virtual Kubelet
// example does (the same client: timeout, body limit, status handling,
// failure names) and shows the outcome; with -watch it pings every
// -interval and prints what each ping changes, the devices included (the
// devices section again whenever what it says changes), for a plugin
// author working against a running plugin:
//
//	pingcheck -url http://127.0.0.1:4000/status -watch
package main
