package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/golden"
)

// TestGolden runs pingcheck on the shared sample data and compares its
// output and exit status with goldens.
func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"readme", []string{"-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/slurm-with-mistakes.json"}, ""},
		{"no-node", []string{"../../testdata/replies/spec-example.json"}, ""},
		{"legacy", []string{"-node", "../../testdata/nodes/node-with-plugin-taints.json", "../../testdata/replies/legacy-ok.txt"}, ""},
		{"taints-empty", []string{"-node", "../../testdata/nodes/node-with-plugin-taints.json", "-"}, `{"taints":[]}`},
		{"compat", []string{"-compat", "-node", "../../testdata/nodes/node-with-plugin-taints.json", "-"}, `{"taints":[]}`},
		{"strict-clean", []string{"-strict", "../../testdata/replies/slurm.json"}, ""},
		{"strict-warnings", []string{"-strict", "-"}, `{"resources":{"cpu":"-1"}}`},
		{"strict-near-miss-device", []string{"-strict", "../../testdata/replies/near-miss-device.json"}, ""},
		{"strict-near-miss-attribute", []string{"-strict", "../../testdata/replies/near-miss-attribute.json"}, ""},
		{"strict-near-miss-capacities", []string{"-strict", "../../testdata/replies/near-miss-capacities.json"}, ""},
		{"strict-devices-under-resources", []string{"-strict", "../../testdata/replies/devices-under-resources.json"}, ""},
		{"unusable", []string{"-strict", "../../testdata/replies/malformed.json"}, ""},
		{"invalid-node", []string{"-node", "../../testdata/nodes/invalid-node.json", "../../testdata/replies/htcondor.json"}, ""},
		{"missing-file", []string{"no-such-reply.json"}, ""},
		{"bad-flag", []string{"-o", "yaml", "../../testdata/replies/slurm.json"}, ""},
		{"answered-at", []string{"-node", "../../testdata/nodes/interlink-node.json", "-at", "2026-11-30T12:00:00Z", "../../testdata/replies/slurm.json"}, ""},
		{"failed", []string{"-node", "../../testdata/nodes/node-with-plugin-taints.json", "-at", "2026-11-30T12:00:00Z", "-failed", "HTTP 503 Service Unavailable"}, ""},
		{"failed-no-grace", []string{"-node", "../../testdata/nodes/node-with-plugin-taints.json", "-grace", "0", "-at", "2026-11-30T12:00:00Z", "-failed", "timeout after 10s"}, ""},
		{"failed-needs-at", []string{"-failed", "HTTP 503"}, ""},
		{"interlink-takeover", []string{"-node", "../../testdata/nodes/interlink-failed-ping.json", "-virtual-node-conditions", "-at", "2026-11-30T00:00:00Z", "../../testdata/replies/slurm.json"}, ""},
		{"unreachable-noschedule", []string{"-node", "../../testdata/nodes/interlink-failed-ping.json", "-unreachable", "NoSchedule", "-at", "2026-11-30T00:00:30Z", "-failed", "HTTP 503"}, ""},
		{"unreachable-bad", []string{"-unreachable", "Evict", "-at", "2026-11-30T00:00:30Z", "-failed", "HTTP 503"}, ""},
		{"not-ready-after-needs-noschedule", []string{"-not-ready-after", "1h", "-at", "2026-11-30T00:00:30Z", "-failed", "HTTP 503"}, ""},
		{"labels-gpu-not-allowed", []string{"-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/labels-gpu.json"}, ""},
		{"labels-gpu-allowed", []string{"-label-namespaces", "nvidia.com", "-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/labels-gpu.json"}, ""},
		{"scratch-and-hugepages", []string{"-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/scratch-and-hugepages.json"}, ""},
		{"scratch-and-hugepages-mistakes", []string{"-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/scratch-and-hugepages-mistakes.json"}, ""},
		{"labels-gpu-protected", []string{"-label-namespaces", "amd.com,nvidia.com", "-protected-labels", "nvidia.com/gpu.product,nvidia.com/gpu.count", "-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/labels-gpu.json"}, ""},
		{"labels-beside-admin", []string{"-node", "../../testdata/nodes/node-with-admin-labels.json", "../../testdata/replies/labels.json"}, ""},
		{"labels-empty", []string{"-node", "../../testdata/nodes/node-with-admin-labels.json", "-"}, `{"labels":{}}`},
		{"label-namespaces-kubernetes", []string{"-label-namespaces", "kubernetes.io", "../../testdata/replies/labels-gpu.json"}, ""},
		{"label-namespaces-not-a-domain", []string{"-label-namespaces", "nvidia.com,Not_A_Domain", "../../testdata/replies/labels-gpu.json"}, ""},
		{"protected-labels-bad", []string{"-protected-labels", "nvidia.com/", "../../testdata/replies/labels-gpu.json"}, ""},
		{"devices-gpus", []string{"-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/devices-gpus.json"}, ""},
		{"devices-mistakes", []string{"../../testdata/replies/devices-mistakes.json"}, ""},
		{"devices-and-accelerators", []string{"../../testdata/replies/devices-and-accelerators.json"}, ""},
		{"devices-empty", []string{"-"}, `{"devices":[]}`},
		{"devices-dra-driver", []string{"-dra-driver", "gpu.nvidia.com", "../../testdata/replies/devices-gpus.json"}, ""},
		{"devices-attribute-domains", []string{"-dra-driver", "gpu.nvidia.com", "-"}, `{"devices":[{"name":"x1","count":1,` +
			`"attributes":{"productName":{"string":"X1"},"example.com/x":{"int":3},"gpu.nvidia.com/mig":{"bool":true}},` +
			`"capacity":{"memory":{"value":"8Gi"},"example.com/lanes":{"value":"16"}}}]}`},
		{"devices-refused", []string{"-dra-driver", "gpu.nvidia.com", "-"}, `{"devices":[` +
			`{"name":"a100","count":8,"attributes":{"cudaComputeCapability":{"version":"8.0"}}},` +
			`{"name":"t4","count":2,"attributes":{"productName":{"string":"Tesla T4"}}},{"name":"l4","count":0}]}`},
		{"devices-refused-total", []string{"-"}, `{"resources":{"basis":"total"},"devices":[{"name":"l4","count":0}]}`},
		{"devices-taints", []string{"-dra-driver", "gpu.nvidia.com", "testdata/devices-taints.json"}, ""},
		{"parts", []string{"-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/slurm-parts-taints.json"}, ""},
		{"parts-mistakes", []string{"-strict", "../../testdata/replies/slurm-parts-mistakes.json"}, ""},
		{"slurm-sum-24", []string{"-strict", "../../testdata/replies/slurm-sum-24.json"}, ""},
		{"slurm-full", []string{"-strict", "../../testdata/replies/slurm-full.json"}, ""},
		{"parts-none", []string{"-"}, `{"status":"ok","nodes":[]}`},
		{"dra-driver-bad", []string{"-dra-driver", "GPU_nvidia.com", "../../testdata/replies/devices-gpus.json"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			got := fmt.Sprintf("$ pingcheck %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(tt.args, " "), code, stdout.String(), stderr.String())
			golden.Check(t, filepath.Join("testdata", tt.name+".golden"), []byte(got))
		})
	}
}

// TestStrictExitStatus pins down the contract a plugin's CI relies on.
func TestStrictExitStatus(t *testing.T) {
	tests := []struct {
		body string
		want int
	}{
		{`{"status":"ok","resources":{"cpu":"64"}}`, exitOK},
		{`ok`, exitOK},
		{`{"resources":{"cpu":"0"}}`, exitWarnings},
		{`{"taints":[{"key":"node.kubernetes.io/x","effect":"NoSchedule"}]}`, exitWarnings},
		{`{"status":`, exitWarnings},
		{`{"labels":{"feature.node.kubernetes.io/cpu-model.vendor_id":"AMD"}}`, exitOK},
		{`{"labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}}`, exitWarnings}, // not allowed without -label-namespaces
		{`{"status":"ok","message":"HTCondor sidecar is alive","timestamp":"2026-11-30T12:00:00Z"}`, exitOK},
		{`{"device":[{"name":"a","count":1}]}`, exitWarnings}, // a near miss of devices (pingstatus rule key-near-miss)
		{`{"Devices":[{"name":"a","count":1}]}`, exitOK},      // devices, in another letter case
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if got := run([]string{"-strict", "-"}, strings.NewReader(tt.body), &stdout, &stderr); got != tt.want {
			t.Errorf("pingcheck -strict on %s: exit %d, want %d\n%s", tt.body, got, tt.want, stdout.String())
		}
		if got := run([]string{"-"}, strings.NewReader(tt.body), &stdout, &stderr); got != exitOK {
			t.Errorf("pingcheck without -strict on %s: exit %d, want 0", tt.body, got)
		}
	}
}

// TestJSONOutputIsTheNode: -o json prints a node a provider could send,
// with the reply applied.
func TestJSONOutputIsTheNode(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-o", "json", "-node", "../../testdata/nodes/interlink-node.json", "../../testdata/replies/slurm.json"}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var node corev1.Node
	if err := json.Unmarshal(stdout.Bytes(), &node); err != nil {
		t.Fatalf("stdout is not a node: %v", err)
	}
	cpu := node.Status.Capacity[corev1.ResourceCPU]
	if node.Name != "interlink-slurm" || cpu.String() != "64" {
		t.Errorf("node %s with cpu %s, want interlink-slurm with 64", node.Name, cpu.String())
	}
}

// TestREADMEShowsTheCurrentOutput keeps the README's first command and the
// output it shows true.
func TestREADMEShowsTheCurrentOutput(t *testing.T) {
	t.Chdir("../..")
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const command = "go run ./examples/pingcheck "
	text := string(readme)
	start := strings.Index(text, command)
	if start < 0 {
		t.Fatal("the README does not give the pingcheck command")
	}
	args := strings.Fields(strings.SplitN(text[start+len(command):], "\n", 2)[0])
	var stdout, stderr bytes.Buffer
	if code := run(args, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("the README's command exits %d: %s", code, stderr.String())
	}
	if !strings.Contains(text, "```\n"+stdout.String()+"```") {
		t.Errorf("the README does not show the command's current output:\n%s", stdout.String())
	}
}

// TestJSONOutputOfParts: -o json prints, for a reply of parts, each
// part's node after the reply, by the part's name (not a golden: the
// JSON form of a node differs between the Kubernetes versions CI tests).
func TestJSONOutputOfParts(t *testing.T) {
	var stdout, stderr bytes.Buffer
	body := `{"nodes":[{"name":"cn001","resources":{"cpu":"1"}},{"name":"cn002","resources":{"cpu":"2"}}]}`
	if code := run([]string{"-o", "json", "-"}, strings.NewReader(body), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var nodes map[string]corev1.Node
	if err := json.Unmarshal(stdout.Bytes(), &nodes); err != nil {
		t.Fatalf("not a map of nodes: %v\n%s", err, stdout.String())
	}
	got := map[string]string{}
	for name, node := range nodes {
		cpu := node.Status.Allocatable[corev1.ResourceCPU]
		got[name] = cpu.String()
	}
	if want := map[string]string{"cn001": "1", "cn002": "2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("each part's allocatable cpu: %v, want %v", got, want)
	}
}
