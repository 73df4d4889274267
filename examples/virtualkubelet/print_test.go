package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// printedFlags are flag sets whose -print-rbac and -print-node-policy
// output testdata/print holds, one file each. The ten without -parts were
// printed by the provider before it served parts, and must stay so rule
// for rule but for what running pods added to every configuration (the
// annotations and the status of its pods, events on them), reviewed line
// by line when it was added: -update never rewrites them (the words of
// three rules' reasons were edited by hand when the Virtual Kubelet node
// controller went); those with -parts are rewritten by go test -run
// TestPrintedRights -update.
var printedFlags = []struct {
	file  string
	parts bool
	args  []string
}{
	{"defaults", false, nil},
	{"fleet", false, []string{"-nodes", "3", "-node", "vk-{i}", "-held=false"}},
	{"election", false, []string{"-leader-elect", "-leader-elect-namespace", "pingnode", "-service-account", "pingnode/provider"}},
	{"devices-fleet-election", false, []string{"-nodes", "2", "-node", "vk-{i}", "-held=false", "-dra-driver", "gpu.nvidia.com", "-leader-elect"}},
	{"label-namespaces", false, []string{"-label-namespaces", "nvidia.com,example.org"}},
	{"devices", false, []string{"-dra-driver", "gpu.nvidia.com"}},
	{"election-in-node-lease", false, []string{"-leader-elect", "-leader-elect-namespace", "kube-node-lease", "-leader-elect-name", "vk-election"}},
	{"fleet-election-labels", false, []string{"-nodes", "5", "-node", "site-{i}", "-leader-elect", "-label-namespaces", "nvidia.com", "-service-account", "ops/vk"}},
	{"one-node-named", false, []string{"-node", "hpc-login", "-ephemeral-storage", "500Gi", "-held=false", "-compat"}},
	{"deployment", false, []string{"-service-account=pingnode/pingnode-provider", "-node=pingnode-virtual", "-plugin=http://pingnode-plugin.pingnode.svc:4000/status",
		"-leader-elect", "-leader-elect-namespace=pingnode", "-leader-elect-name=pingnode-provider", "-leader-elect-id=pod-0", "-metrics-addr=:8080"}},
	{"parts", true, []string{"-parts"}},
	{"parts-template-owner", true, []string{"-parts", "-node", "slurm-{part}.hpc.example.org", "-parts-owner", "slurm", "-part-grace", "10m"}},
	{"parts-devices-election", true, []string{"-parts", "-node", "gpu-{part}", "-dra-driver", "gpu.nvidia.com", "-leader-elect", "-leader-elect-namespace", "pingnode", "-label-namespaces", "nvidia.com"}},
	{"parts-confirm", true, []string{"-parts", "-confirm"}},
	{"confirm-devices", false, []string{"-confirm", "-dra-driver", "gpu.nvidia.com"}},
}

// TestPrintedRights: what -print-rbac and -print-node-policy print, both
// at once, for each of printedFlags, is what testdata/print holds: the
// configurations without -parts print what they printed before the
// provider served parts.
func TestPrintedRights(t *testing.T) {
	for _, tt := range printedFlags {
		t.Run(tt.file, func(t *testing.T) {
			a := accessOfArgs(t, tt.args)
			rbac, err := a.YAML()
			if err != nil {
				t.Fatal(err)
			}
			policy, err := a.PolicyYAML()
			if err != nil {
				t.Fatal(err)
			}
			got := string(rbac) + string(policy)
			path := filepath.Join("testdata", "print", tt.file+".yaml")
			if *update && tt.parts {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%v: the printed rights differ from %s:\n%s", tt.args, path, lineDiff(string(want), got))
			}
			if parts := strings.Contains(got, vnode.OwnerLabel); parts != tt.parts {
				t.Errorf("%v: the ownership label in the rights %v, want it with -parts only", tt.args, parts)
			}
		})
	}
}
