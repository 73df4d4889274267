// Package metrics is what the reference provider tells its operators:
// its Prometheus metrics and the probes of its metrics server.
//
// The metrics of one process are shared by its nodes, and every per-node
// series carries the node's name, or, for the nodes of a provider of
// parts, the template's ([Metrics.ForParts]): 5,000 parts have the series
// of one node. Each label takes a small fixed set of values, a node's
// name or a resource the node stores, never a string from a plugin's
// reply. A node's series that take a fixed set of labels are created at
// zero when the node starts ([Metrics.ForNode]), so that a rate over them
// is defined from the start.
//
// /healthz, the liveness probe, says only that the process serves: a
// start that fails is retried with backoff, and a leader that cannot renew
// its Lease exits by itself, so no restart would mend anything. /readyz
// says whether the replica is ready: a leader (or the only replica) once
// every node it runs has started, a standby once its last try at the
// election Lease reached the API server and was allowed ([Metrics.Ready]).
package metrics
