package main

import (
	"maps"
	"slices"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/election"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/rights"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// accessFor is the Access of the ServiceAccount namespace/name that runs
// the providers of configs, with the election e (nil: none): the one
// source of the rights, for -print-rbac and for the tests.
func accessFor(namespace, name string, configs []vnode.Config, e *election.Election) rights.Access {
	a := rights.Access{
		ServiceAccount: name, Namespace: namespace, App: vnode.FieldManager,
		PodEventReasons: []string{vnode.ReasonDevicesGiven, vnode.ReasonClaimNotAllowed},
	}
	a.Jobs = &rights.Jobs{Annotations: []string{jobs.RecordAnnotation, jobs.JobIDAnnotation}, EventReasons: jobs.EventReasons()}
	if e != nil {
		a.Election = &rights.Lease{Namespace: e.Namespace, Name: e.Name}
	}
	for _, c := range configs {
		if c.Static != nil {
			a.Nodes = append(a.Nodes, c.Static.Name)
			if a.StaticLabels == nil {
				a.StaticLabels = map[string]map[string]string{}
			}
			a.StaticLabels[c.Static.Name] = maps.Clone(c.Static.Labels)
		}
		if c.Parts != nil {
			a.Parts = partsAccess(c.Parts)
		}
		a.Held = a.Held || c.CountHeld
		if c.DRADriver != "" {
			a.DRADriver = c.DRADriver
		}
		if c.Confirm {
			a.Confirm = &rights.Confirm{Driver: confirm.DefaultDriver, Class: confirm.DefaultClass}
		}
		for _, ns := range c.LabelNamespaces {
			if !slices.Contains(a.LabelNamespaces, ns) {
				a.LabelNamespaces = append(a.LabelNamespaces, ns)
			}
		}
	}
	return a
}

// partsAccess is how the nodes of the provider of parts p are named and
// owned, as its rights fence them: by the same template, pattern and
// labels the provider tells its own nodes by (internal/vnode's parts.go).
func partsAccess(p *vnode.Parts) *rights.Parts {
	return &rights.Parts{
		Template: p.Template, Token: vnode.PartToken,
		Part: vnode.PartPattern, Names: p.Pattern(),
		OwnerLabel: vnode.OwnerLabel, Owner: p.Owner, PartLabel: vnode.PartLabel,
		Labels: vnode.StaticNode("").Labels,
	}
}
