// Package caches is the reference provider's view of the cluster: the
// informers it reads its nodes, their pods, their ResourceSlices and the
// ResourceClaims from, so that a ping reads nothing from the API server.
//
// A node of its own watches its node by name and its pods by
// spec.nodeName ([Start]). The supervisor of a provider of parts watches
// every node with its ownership label and every bound pod, once
// ([Owned]), and each part's node reads its own from them by its name
// ([Set.Shared]), so that 5,000 parts cost two watches, not 10,000. The
// ResourceClaims cannot be selected by node, so a fleet shares one
// informer of every claim, indexed by the pools their allocations take
// devices from ([SharedClaims]).
//
// Nothing a cache holds keeps its managed fields, nor does any node the
// provider's client of nodes returns ([LeanNodes]): no reader needs them,
// and they are a third of a node or more. A start waits until the caches
// hold what the API server holds, for at most [SyncTimeout], and fails at
// once on a list or watch the API server refuses, with what it refused.
package caches
