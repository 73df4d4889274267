package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

// watch pings every interval, applies each outcome to the node and to the
// pool of devices as the provider would, and prints a line for each ping
// with what it changed and what was refused. The devices section follows
// whenever what it says (the devices, and why a group has none) is not
// what it said last, with what the ping changed of them; a steady ping
// prints none. It stops when ctx ends or after count pings.
func watch(ctx context.Context, w io.Writer, ping func(context.Context) nodeapply.Ping, node *corev1.Node, interval time.Duration, count int,
	opts nodeapply.Options, driver string) int {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var published []devicepool.Device // as published after the last ping
	said, shown := "", false          // the devices section as last printed, without what changed
	for n := 1; ; n++ {
		p, warnings := nodeapply.Judge(ping(ctx), opts.Reply)
		if ctx.Err() != nil {
			return exitOK
		}
		res, pool := apply(node, published, p, opts)
		warnings = slices.Concat(warnings, res.Warnings, pool.Warnings)
		what := fmt.Sprintf("answered, %d bytes", len(p.Body))
		if !p.Reached() {
			what = "failed: " + p.Failure
		}
		changes := fmt.Sprintf("%d changes", len(res.Changes))
		listed := p.Reply != nil && p.Reply.ReplaceDevices
		if listed {
			changes += fmt.Sprintf(", %d device changes", len(pool.Changes))
		}
		fmt.Fprintf(w, "%s  ping %d  %s  %s, %d warnings\n", p.At.UTC().Format(time.RFC3339), n, what, changes, len(warnings))
		for _, c := range res.Changes {
			fmt.Fprintf(w, "    %s\n", c)
		}
		for _, warning := range warnings {
			fmt.Fprintf(w, "    warning: %s\n", warning)
		}
		if listed {
			// What the section says, whatever this ping changed.
			now := strings.Join(deviceLines(p.Reply, pool.Devices, pool.Devices, driver), "\n")
			if !shown || now != said || len(pool.Changes) > 0 {
				var section strings.Builder
				reportDevices(&section, p.Reply, published, pool, driver)
				for _, l := range strings.SplitAfter(strings.TrimSuffix(section.String(), "\n"), "\n") {
					fmt.Fprintf(w, "    %s", l)
				}
				fmt.Fprintln(w)
				said, shown = now, true
			}
		}
		node, published = res.Node, pool.Devices
		if count > 0 && n >= count {
			return exitOK
		}
		select {
		case <-ctx.Done():
			return exitOK
		case <-ticker.C:
		}
	}
}
