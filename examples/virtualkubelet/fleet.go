package main

import (
	"errors"
	"strconv"
	"strings"
)

// Index stands for a node's index (0, 1, ...) in the node name and the
// plugin URL of a fleet. It is replaced as text, not as a fmt verb, so
// that a URL's own percent-escapes stay as they are; and it goes where
// the index belongs: in a path (one plugin, or a gateway, serving every
// node: 'http://127.0.0.1:4000/status/{i}'), a query or a host name.
const Index = "{i}"

// Fleet returns the configurations of n nodes that differ in name and
// plugin URL only: those of base, with the name and URL patterns. With
// more than one node the name must hold [Index], so that every node has
// its own; a pattern without it is used as it is.
func Fleet(n int, name, plugin string, base Config) ([]Config, error) {
	switch {
	case n < 1:
		return nil, errors.New("-nodes: want at least one node")
	case n > 1 && !strings.Contains(name, Index):
		return nil, errors.New("-node: with more than one node, the name must hold " + Index + ", the node's index")
	}
	configs := make([]Config, n)
	for i := range configs {
		index := strconv.Itoa(i)
		cfg := base
		cfg.Static = StaticNode(strings.ReplaceAll(name, Index, index))
		for resource, q := range base.StaticResources {
			cfg.Static.Status.Capacity[resource] = q.DeepCopy()
			cfg.Static.Status.Allocatable[resource] = q.DeepCopy()
		}
		cfg.PluginURL = strings.ReplaceAll(plugin, Index, index)
		configs[i] = cfg
	}
	return configs, nil
}
