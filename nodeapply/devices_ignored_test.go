package nodeapply

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/pingstatus"
)

// withoutDevices returns a copy of patch without its devices: as the
// plugin's reply would be, had it sent no devices list. It keeps the
// patch's judgement, so that Apply takes both as judged alike (a reply
// that lists devices counts no accelerator, rule device-not-counted,
// which the judgement of the copy alone would not know).
func withoutDevices(patch *pingstatus.NodePatch) *pingstatus.NodePatch {
	if patch == nil {
		return nil
	}
	out := *patch
	out.ReplaceDevices, out.Devices, out.KeptDeviceGroups = false, nil, nil
	return &out
}

// TestPropertyDevicesIgnored: Apply is node in, node out. A ping whose
// reply has devices gives the Result that the same ping gives without
// them: the node (the input itself, or an equal one), its changes, its
// warnings and its two patches. The devices are the pool's, package
// devicepool's. One warning tells them apart: a failed or Unlisted ping
// whose reply has devices and nothing else has its reply ignored with a
// warning (rules failure-keeps and part-gone), and without them it has no reply to ignore.
func TestPropertyDevicesIgnored(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := agreementOptions(t)
		node := agreementNode(t, opts)
		ping := agreementPing(t, node)
		if ping.Reply == nil || !ping.Reply.ReplaceDevices {
			ping.Reply = withoutDevices(ping.Reply)
			if ping.Reply == nil {
				ping.Reply = &pingstatus.NodePatch{Kind: pingstatus.Structured}
			}
			ping.Reply.ReplaceDevices = true
			ping.Reply.Devices, ping.Reply.KeptDeviceGroups = gen.PatchDevices(t)
		}
		if ping.Reached() && !ping.Unlisted {
			ping.Reply, _ = opts.Reply.Check(ping.Reply) // judged with its devices
		}
		bare := ping
		bare.Reply = withoutDevices(ping.Reply)
		with, without := Apply(node, ping, opts), Apply(node, bare, opts)
		if (with.Node == node) != (without.Node == node) {
			t.Fatalf("with devices the input node back: %v; without: %v", with.Node == node, without.Node == node)
		}
		if diff := cmp.Diff(without.Node, with.Node, sameSpelling); diff != "" {
			t.Fatalf("the devices change the node (-without +with):\n%s", diff)
		}
		if diff := cmp.Diff(without.Changes, with.Changes, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the devices change the changes (-without +with):\n%s", diff)
		}
		wantWarnings := without.Warnings
		if (!ping.Reached() || ping.Unlisted) && bare.Reply.IsEmpty() {
			// Rules failure-keeps and part-gone: a failed or Unlisted
			// ping's reply is ignored with a warning, and one with
			// devices alone is a reply with news.
			message, rule := "the ping failed; its reply is ignored", "failure-keeps"
			if ping.Reached() {
				message, rule = "the ping is Unlisted (the reply does not list this node's part); its reply is ignored", "part-gone"
			}
			wantWarnings = slices.Concat(wantWarnings, []pingstatus.Warning{{Path: "ping.reply", Message: message, Subject: pingstatus.SubjectReply, Action: pingstatus.Ignored, Rule: rule}})
			slices.SortStableFunc(wantWarnings, func(x, y pingstatus.Warning) int { return strings.Compare(x.Path, y.Path) })
		}
		if diff := cmp.Diff(wantWarnings, with.Warnings, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the devices change the warnings (-without +with):\n%s", diff)
		}
		if !bytes.Equal(with.ObjectPatch(), without.ObjectPatch()) || !bytes.Equal(with.StatusPatch(), without.StatusPatch()) {
			t.Fatalf("the devices change the patches: %s %s, without them %s %s", with.ObjectPatch(), with.StatusPatch(), without.ObjectPatch(), without.StatusPatch())
		}
	})
}
