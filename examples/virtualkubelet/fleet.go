package main

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/leases"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/poddata"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/supervise"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
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
func Fleet(n int, name, plugin string, base vnode.Config) ([]vnode.Config, error) {
	switch {
	case n < 1:
		return nil, errors.New("-nodes: want at least one node")
	case n > 1 && !strings.Contains(name, Index):
		return nil, errors.New("-node: with more than one node, the name must hold " + Index + ", the node's index")
	}
	configs := make([]vnode.Config, n)
	for i := range configs {
		index := strconv.Itoa(i)
		cfg := base
		cfg.Static = vnode.StaticNode(strings.ReplaceAll(name, Index, index))
		for resource, q := range base.StaticResources {
			cfg.Static.Status.Capacity[resource] = q.DeepCopy()
			cfg.Static.Status.Allocatable[resource] = q.DeepCopy()
		}
		cfg.PluginURL = strings.ReplaceAll(plugin, Index, index)
		configs[i] = cfg
	}
	return configs, nil
}

// runProviders runs a provider for each configuration until ctx ends: a
// node of its own under a supervisor of one node, which pings its
// plugin, and with -parts the supervisor of the plugin's parts' nodes.
// Each node starts, and retries its start, on its own: one node that
// cannot start never stops the others. Each node has its own client, so
// its own rate limit, as a kubelet has; client-go shares the connections
// of clients with the same configuration. One renewer renews every
// node's Lease (internal/leases), through the client of the process's
// many nodes (supervise.PartsRestConfig). It returns an error only for a
// configuration that cannot work, before any node starts. A
// configuration with Parts (-parts) is run by the parts supervisor.
func runProviders(ctx context.Context, restConfig *rest.Config, configs []vnode.Config, log *slog.Logger) error {
	for i := range configs {
		if err := configs[i].Check(); err != nil {
			return err
		}
	}
	many, err := kubernetes.NewForConfig(supervise.PartsRestConfig(restConfig))
	if err != nil {
		return err
	}
	at := len(configs) // nodes at once
	if configs[0].Parts != nil {
		at = leases.MaxWorkers // as many as the plugin has parts
	}
	renewals, stopRenewals := vnode.StartRenewer(ctx, configs[0], many, at, log) // the Lease's settings are the same for every node
	defer stopRenewals()                                                         // once the nodes have stopped
	data := poddata.NodeSource(restConfig)                                       // one client a node, for every node
	for i := range configs {
		configs[i].Process.Leases, configs[i].Process.Data = renewals, data
	}
	if len(configs) == 1 && configs[0].Parts != nil {
		return supervise.RunParts(ctx, restConfig, many, configs[0], log) // one plugin, a node for each of its parts
	}
	clients := make([]kubernetes.Interface, len(configs))
	for i := range configs {
		client, err := kubernetes.NewForConfig(restConfig)
		if err != nil {
			return err
		}
		clients[i] = client
	}
	claims, stopClaims, err := caches.SharedClaims(ctx, restConfig, configs[0].DRADriver != "" || configs[0].Confirm) // one fleet, one driver
	if err != nil {
		return err
	}
	defer stopClaims()
	waiting, stopWaiting, err := supervise.StartWaiting(ctx, many, configs[0])
	if err != nil {
		return err
	}
	defer stopWaiting()
	var nodes sync.WaitGroup
	for i, cfg := range configs {
		cfg.Process.Claims, cfg.Process.Waiting = claims, waiting
		nodeLog := log.With("node", cfg.Static.Name)
		nodeLog.Info("provider starting", "plugin", cfg.PluginURL)
		s := supervise.One(vnode.New(cfg, clients[i], nodeLog))
		nodes.Go(func() { _ = s.RunRetrying(ctx) }) // checked above
	}
	nodes.Wait()
	return nil
}
