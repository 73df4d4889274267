package main

import (
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// partResult is a part that a reply lists, its ping applied to its node.
type partResult struct {
	name string
	ping nodeapply.Ping // the reply's ping, with the part's patch
	res  nodeapply.Result
	pool devicepool.Result
}

// applyParts applies each part that the reply of ping lists to node,
// which stands for each part's node (the -node file, or an empty node),
// as a provider that serves parts applies one ping to every part's node.
// It returns the parts, sorted by name as the reply's, and the warnings
// of their steps, each message saying its part.
func applyParts(node *corev1.Node, ping nodeapply.Ping, opts nodeapply.Options) ([]partResult, []pingstatus.Warning) {
	if !ping.Reached() || ping.Reply == nil || !ping.Reply.ReplaceParts {
		return nil, nil
	}
	var parts []partResult
	var warnings []pingstatus.Warning
	for i := range ping.Reply.Parts {
		part := &ping.Reply.Parts[i]
		p := ping
		p.Reply = &part.Patch
		res, pool := apply(node, nil, p, opts)
		for _, w := range slices.Concat(res.Warnings, pool.Warnings) {
			w.Message = "part " + part.Name + ": " + w.Message
			warnings = append(warnings, w)
		}
		parts = append(parts, partResult{name: part.Name, ping: p, res: res, pool: pool})
	}
	return parts, warnings
}

// reportParts writes, after the report of a reply that lists parts, each
// part's section: what the part's node would change, and its devices
// when the part lists them.
func reportParts(w io.Writer, reply *pingstatus.NodePatch, parts []partResult, nodeName, driver string) {
	fmt.Fprintf(w, "\nparts (%d), each applied to %s\n", len(parts), nodeName)
	if reply.PartsIncomplete {
		fmt.Fprintln(w, "  an entry was refused before its name was read: no part leaves with this reply")
	}
	for _, p := range parts {
		fmt.Fprintf(w, "\npart %s\n", p.name)
		writeChanges(w, p.res.Changes, len(p.pool.Changes))
		if p.ping.Reply.ReplaceDevices {
			reportDevices(w, p.ping.Reply, nil, p.pool, driver)
		}
	}
}

// partNodes returns the node after the reply for each part, by name, for
// -o json.
func partNodes(parts []partResult) map[string]*corev1.Node {
	nodes := make(map[string]*corev1.Node, len(parts))
	for _, p := range parts {
		nodes[p.name] = p.res.Node
	}
	return nodes
}

// nodeName says which node each part is applied to.
func nodeName(file string) string {
	if file == "" {
		return "an empty node"
	}
	return file
}
