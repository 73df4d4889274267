package vnode

import (
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// What is built from a configuration, once it is checked: the library's
// options and the plugin's client.

// Options are the library's options, built here from the configuration:
// the reply's (the protected keys among them) are part of them.
func (c *Config) Options() Options {
	return Options{nodeapply.Options{
		Reply: pingstatus.Options{
			ProtectedKeys:   c.StaticKeys,
			LabelNamespaces: c.LabelNamespaces,
			ProtectedLabels: c.StaticLabelKeys(),
		},
		ReplaceAllTaints:      c.Compat,
		Grace:                 c.Grace,
		NoGrace:               c.NoGrace,
		ConnectivityCondition: c.ConnectivityCondition,
		Unreachable:           c.Unreachable,
		NotReadyAfter:         c.NotReadyAfter,
		// MemoryPressure, DiskPressure, PIDPressure and NetworkUnavailable
		// False, with true transition times: after an outage, when the
		// node lifecycle controller set the pressures Unknown, or on a
		// node interLink left NetworkUnavailable, the next ping restores
		// them.
		VirtualNodeConditions: true,
		PartGrace:             c.partGrace(),
	}}
}

// partGrace is the part grace of Parts, zero without parts.
func (c *Config) partGrace() time.Duration {
	if c.Parts == nil {
		return 0
	}
	return c.Parts.Grace
}

// Options are the library's options of a configuration ([Config.Options]).
type Options struct{ Apply nodeapply.Options }

// connectivity is the type of the connectivity condition in use.
func (o *Options) connectivity() corev1.NodeConditionType {
	if o.Apply.ConnectivityCondition == "" {
		return nodeapply.DefaultConnectivityCondition
	}
	return o.Apply.ConnectivityCondition
}

// transport is how the plugin is reached: Transport, with the URL, the
// timeout and the read limit of this configuration.
func (c *Config) transport() pingclient.Config {
	t := c.Transport
	t.URL, t.Timeout, t.MaxBodyBytes = c.PluginURL, c.Timeout, c.Options().Apply.Reply.MaxBodyBytes
	return t
}

// PingClient is the client that pings the plugin, reading at most what
// Parse accepts. It fails when a file it names cannot be used.
func (c *Config) PingClient(log *slog.Logger) (*pingclient.Client, error) {
	t := c.transport()
	t.Log = log
	return pingclient.New(t)
}
