// Command virtualkubelet is a Virtual Kubelet provider built on pingnode:
// it registers a virtual node, pings a plugin, and keeps the node's
// capacity, allocatable and taints true to the plugin's replies.
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -plugin http://127.0.0.1:4000/status
//
// With -dra-driver it publishes the plugin's devices as Dynamic Resource
// Allocation devices, one pool of ResourceSlices a node (see internal/vnode),
// which the scheduler allocates to pods' claims:
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -dra-driver gpu.nvidia.com
//
// One process can run a fleet of virtual nodes, each with its own Lease
// and plugin URL ({i} in -plugin is the node's index,
// for a gateway that serves many; without it, one plugin serves all):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -nodes 100 -node 'pingnode-virtual-{i}'
//
// With -parts it serves its plugin's parts, the machines or partitions
// its reply lists, each as a node of its own named by the -node template,
// all from one ping of the plugin (see internal/supervise):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -parts -node 'slurm-{part}'
//
// Several replicas can run for the same nodes: with -leader-elect they
// elect a leader with a Lease (see internal/election), and only the leader
// serves the nodes and pings. With -metrics-addr, each serves its
// Prometheus metrics (see internal/metrics):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -leader-elect -leader-elect-id a -metrics-addr 127.0.0.1:9101
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -leader-elect -leader-elect-id b -metrics-addr 127.0.0.1:9102
//
// Its rights are data (see internal/rights): -print-rbac prints the RBAC
// objects the configuration the other flags give needs, bound to
// -service-account, and -print-node-policy the admission policy that
// fences what RBAC cannot name; deploy/ holds them, for a Deployment of
// two replicas:
//
//	go run . -service-account pingnode/pingnode-provider -leader-elect -print-rbac
//
// How it works, concern by concern, is in the packages below; README.md
// is the operator's guide: what it does, how to run it, what it costs.
//
// # Files
//
// This package is the command: its flags (`flags.go`), the configurations
// of a fleet and the start of their nodes with one renewer of their Leases
// (`fleet.go`), the rights a configuration needs (`rights.go`), the
// kubelet API's flags and its logs (`kubelet.go`), and the start of it
// all (`main.go`). The rest is in packages of their own, each
// with its documentation:
//
//	| package | job |
//	|---|---|
//	| `internal/vnode` | one virtual node, from its ping to its writes: the configuration and its check; registration; the step at each ping; the library's object and status patches, sent; the status report; events; devices (see its Labels, Devices, Pods deleted on the node) |
//	| `internal/supervise` | the one ping loop of every node: the supervisor of one node, and the supervisor of a plugin's parts with a node for each (see its Parts); the backend's confirmation |
//	| `internal/caches` | the informers the provider reads its node, its pods, its ResourceSlices and the ResourceClaims from; with `-parts`, the supervisor's, which every part's node reads by its name |
//	| `internal/leases` | the one renewer of every node's Lease |
//	| `internal/pods` | the end of a pod deleted on the node: deleted at once (grace period 0), as a kubelet deletes a pod that has stopped |
//	| `internal/devices` | with `-dra-driver`, the ResourceSlice controller that publishes a node's pool, and the pool's split into slices |
//	| `internal/jobs` | with `-confirm`, the jobs of the pods that wait before they bind, made, read and removed through the plugin, and each pod confirmed or refused on its claim |
//	| `internal/kubeletapi` | with `-kubelet-addr`, the kubelet API of the nodes that `kubectl logs` reads, over TLS: each log asked of the plugin of the pod's node (`kubelet.go`) |
//	| `internal/metrics` | Prometheus metrics and the probes `/healthz` and `/readyz` |
//	| `internal/rights` | its rights, as data: the RBAC rules each configuration needs, each with its reason (`-print-rbac`), and the admission policy that fences what RBAC cannot name (`-print-node-policy`) |
//	| `internal/election` | leader election among replicas, with a Lease |
//	| `internal/setting` | how a setting that cannot work is said, under its flag's name |
//	| `deploy/`, `Dockerfile` | manifests to run it in a cluster: two replicas with leader election, as a ServiceAccount with only its rights |
//
// # Rights
//
// Its rights are data, in package `internal/rights`: for each
// configuration (its nodes, `-held`, `-leader-elect`, `-dra-driver`,
// `-parts`) the least RBAC it runs with, each rule with its reason, and
// the admission policy that fences what RBAC cannot name. `accessFor`
// (`rights.go`) turns the configuration into the package's `Access`;
// `-print-rbac` and `-print-node-policy` print what it gives. The
// package's documentation has each rule and what breaks without it
// (`TestRightsEachNeeded`), what the policy fences, with `-dra-driver`
// and `-parts` too, and how the rights compare with interLink's.
//
// # Tests
//
// With `-short`, `TestMain` neither builds nor starts the control plane, and
// every test that needs it skips (`needsControlPlane`, in `env_test.go`). The
// rest run: the flags and what a flag that cannot work says
// (`flags_test.go`), the printed manifests (`-print-rbac`,
// `-print-node-policy`, and `deploy/`, which must be what they print), the
// rules of `internal/rights`, a stored node's refresh, the
// finisher of pods being deleted (`internal/pods`), and the provider itself, a node under its
// supervisor of one node against a fake clientset
// (`k8s.io/client-go/kubernetes/fake`) and a plugin on `httptest`: its
// pings, one at a time, put the reply's resources, taint and ownership
// annotation on the node, an identical reply writes nothing, a failed ping
// turns the conditions False, and the object patch is read again after a
// conflict and counted as a write error when refused (`pingstep_test.go`);
// the renewer of the Leases (`internal/leases`); and the provider of parts
// (below). 10 to 15 s once compiled (on 2 cores; with `-race`, as CI runs
// it, about 30 s, most of it linking and the flag tests' child processes).
//
// Without `-short`, the tests run the provider against the real control
// plane, which `TestMain` starts once (and builds first, 5 to 13 minutes
// cold, which is why `-timeout` is given: go test's own is 10 minutes):
// every test, none skipped, which CI checks.
//
// The control plane authorizes as a real cluster does (`testenv -rbac`:
// Node and RBAC authorization, the NodeRestriction admission plugin), and
// every provider a test runs, in the test's process or as a child process
// with a kubeconfig, runs as a ServiceAccount of its own bound to exactly
// the rules `internal/rights` gives its configuration (the same `Access` that
// `-print-rbac` prints), with a token minted through the TokenRequest API
// and kept in a file, as a pod's is. The whole suite takes about 8
// minutes once the control plane is built (466 s on 2 shared cores),
// passes when run again on the same control plane (`-count=2`), and cleans
// up what it makes: nodes, their Leases and events, pods, admission
// policies, ServiceAccounts and their rights (`TestMain` fails the run if a
// ServiceAccount, a role, a binding or a policy of the provider's is
// left). `TestRightsEachNeeded` takes each rule away in turn and shows what
// breaks (the table in `internal/rights`); its twelve cases run in
// parallel, in a few seconds.
// `TestDeviceRightsEachNeeded` does the same for the five rules
// `-dra-driver` adds or changes. The tests of devices (`devices_*_test.go`)
// run the real scheduler, resource claim controller and device taint
// eviction controller against the provider's slices, count the slice writes
// on the API server's `apiserver_request_total`, and dry-run create, as
// slices, the pools of 400 drawn replies (`TestDevicesValidity`: none
// refused); `TestDevicesSamplePlugin` builds the sample plugin
// (`examples/plugin`, `go build`, seconds) and runs it as shipped, with
// `-devices examples/plugin/testdata/gpus.json`, on a free port of
// 127.0.0.1.
// The tests of parts (`-run Parts` runs them all, about a minute against
// the control plane): in the unit tier, the parts supervisor against a
// fake clientset, one ping at a time and the part grace on a clock of the
// test's, turns a sequence of replies into registrations, pings, leaves and
// deletions, adopts the node it owned before, never writes another's node
// of a part's name, and registers or deletes nothing at a failed ping or a
// reply without parts (`TestPartsSupervisorFakeClient`); a part's node
// holds back a change of figures alone for 10 s after its last status
// write, a taint goes at once, and the last figure is written after the
// 10 s (`TestPartsFiguresHeldBack`); a provider without
// `-parts` says once that a reply's parts are ignored
// (`TestPartsIgnoredWithoutParts`); the template's checks; and
// `TestPrintedRights`: what `-print-rbac` and `-print-node-policy` print for
// 13 flag sets is what `testdata/print` holds, the ten without `-parts` as
// the provider printed them before it served parts, byte for byte (`-update`
// rewrites only the others). Against the control plane, with the real
// scheduler, node lifecycle controller and taint eviction controller:
// `TestPartsScheduling`, `TestPartsGone`, `TestPartsPluginDown` (each
// stepping the supervisor one ping at a time with the hook before its pings (`BeforePing`), and
// moving the plugin's clock, not sleeping, for the part grace),
// `TestPartsRestart` (the provider as a process, SIGKILLed and started
// again), `TestPartsSamplePlugin` (the sample plugin as shipped, `-parts
// examples/plugin/testdata/parts.json`), `TestPartsFence` (the policy,
// with the provider's token) and `TestPartsScale` (what a part's node
// costs, see internal/supervise); each fault test ends by checking that
// nothing was lost.
// To build the control plane once and reuse it:
//
//	cd examples/testenv && go build -o /tmp/testenv .
//	cd ../virtualkubelet && PINGNODE_TESTENV=/tmp/testenv go test -race -timeout 40m -run 'TestTaintsRefused|TestStartErrorReturns' -v ./...
package main
