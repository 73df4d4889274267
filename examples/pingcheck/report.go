package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// What pingcheck prints of a reply: its kind, its warnings and the
// changes to the node.

// report writes the human output: a header, then aligned sections: the
// warnings, the changes of the node, and the devices the provider would
// publish from the pool before, when the reply lists devices.
func report(w io.Writer, name string, size int, ping *nodeapply.Ping, warnings []pingstatus.Warning, res nodeapply.Result,
	before []devicepool.Device, pool devicepool.Result, driver string) {
	changes, devices := res.Changes, len(pool.Changes)
	if !ping.At.IsZero() {
		fmt.Fprintf(w, "ping     at %s\n", ping.At.UTC().Format(time.RFC3339))
	}
	if ping.Reached() {
		if name == "-" {
			name = "standard input"
		}
		fmt.Fprintf(w, "reply    %s (%d bytes)\n", name, size)
		kind := ping.Reply.Kind.String()
		if ping.Reply.Status != "" {
			kind += fmt.Sprintf(", status %q", ping.Reply.Status)
		}
		fmt.Fprintf(w, "kind     %s\n", kind)
	} else {
		fmt.Fprintf(w, "failed   %s\n", ping.Failure)
	}

	fmt.Fprintf(w, "\nwarnings (%d)\n", len(warnings))
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, warning := range warnings {
		path := warning.Path
		if path == "" {
			path = "(reply)"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", path, warning.Message)
	}
	tw.Flush()

	if ping.Reached() && ping.Reply.ReplaceParts {
		return // the changes are the parts' (reportParts)
	}
	fmt.Fprintln(w)
	writeChanges(w, changes, devices)
	if ping.Reply != nil && ping.Reply.ReplaceDevices {
		fmt.Fprintln(w)
		reportDevices(w, ping.Reply, before, pool, driver)
	}
}

// writeChanges writes the changes section: the node's changes, aligned,
// or why there are none (devices is how many the pool's are).
func writeChanges(w io.Writer, changes []nodeapply.Change, devices int) {
	fmt.Fprintf(w, "changes (%d)\n", len(changes))
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, c := range changes {
		switch c.Op {
		case nodeapply.Added:
			fmt.Fprintf(tw, "  %s\t+ %s\n", c.Path, c.New)
		case nodeapply.Removed:
			fmt.Fprintf(tw, "  %s\t- %s\n", c.Path, c.Old)
		default:
			fmt.Fprintf(tw, "  %s\t%s -> %s\n", c.Path, c.Old, c.New)
		}
	}
	tw.Flush()
	switch {
	case len(changes) == 0 && devices == 0:
		fmt.Fprintln(w, "  none: the provider sends nothing")
	case len(changes) == 0:
		fmt.Fprintln(w, "  none of the node")
	}
}
