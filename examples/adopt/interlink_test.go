package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// interLink's ping reply, as interLink 0.6.2 declares it in
// pkg/interlink/types.go (module github.com/interlink-hq/interlink, PR
// #516): the same type names, Go types and JSON tags, which are all that
// decoding depends on. The module is not on the Go module proxy, so this
// module cannot require it; a provider that can imports those types
// instead of these. interLink has no labels field.
type (
	interLinkPingResponse struct {
		Status    string                      `json:"status,omitempty"`
		Resources *interLinkResourcesResponse `json:"resources,omitempty"`
		Taints    *[]interLinkTaintResponse   `json:"taints,omitempty"`
	}
	interLinkTaintResponse struct {
		Key    string `json:"key"`
		Value  string `json:"value,omitempty"`
		Effect string `json:"effect"`
	}
	interLinkResourcesResponse struct {
		CPU          string                         `json:"cpu,omitempty"`
		Memory       string                         `json:"memory,omitempty"`
		Pods         string                         `json:"pods,omitempty"`
		Accelerators []interLinkAcceleratorResponse `json:"accelerators,omitempty"`
	}
	interLinkAcceleratorResponse struct {
		ResourceType string `json:"resourceType"`
		Available    string `json:"available"`
	}
)

// interLinkReads decodes a reply body as interLink's provider does after a
// successful ping (pkg/virtualkubelet/virtualkubelet.go): json.Unmarshal
// into its PingResponse, and the resources and taints used only when that
// returns no error. encoding/json passes over fields the type lacks.
func interLinkReads(body []byte) (interLinkPingResponse, error) {
	var resp interLinkPingResponse
	err := json.Unmarshal(body, &resp)
	return resp, err
}

// gpuReply is a plugin's reply with resources, taints and labels, built
// with pingnode's wire types as a Go plugin builds it.
func gpuReply(t *testing.T, labels map[string]string) []byte {
	t.Helper()
	body, err := json.Marshal(pingstatus.PingResponse{
		Status: "ok",
		NodeResponse: pingstatus.NodeResponse{
			Resources: &pingstatus.ResourcesResponse{CPU: "64", Memory: "250000Mi", Pods: "500",
				Accelerators: []pingstatus.AcceleratorResponse{{ResourceType: "nvidia.com/gpu", Available: "8"}}},
			Taints: []pingstatus.TaintResponse{{Key: "slurm.example.com/drain", Value: "maintenance", Effect: "NoSchedule"}},
			Labels: labels,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

var gpuLabels = map[string]string{
	"nvidia.com/gpu.product":                         "NVIDIA-A100-SXM4-80GB",
	"feature.node.kubernetes.io/cpu-model.vendor_id": "AMD",
}

// TestInterLinkReadsAReplyWithLabels: interLink decodes a reply that
// carries labels without an error, into the very resources and taints it
// reads from the same reply without them; pingnode reads the labels from
// the same bytes.
func TestInterLinkReadsAReplyWithLabels(t *testing.T) {
	body := gpuReply(t, gpuLabels)
	got, err := interLinkReads(body)
	if err != nil {
		t.Fatalf("interLink does not decode %s: %v", body, err)
	}
	want := interLinkPingResponse{
		Status: "ok",
		Resources: &interLinkResourcesResponse{CPU: "64", Memory: "250000Mi", Pods: "500",
			Accelerators: []interLinkAcceleratorResponse{{ResourceType: "nvidia.com/gpu", Available: "8"}}},
		Taints: &[]interLinkTaintResponse{{Key: "slurm.example.com/drain", Value: "maintenance", Effect: "NoSchedule"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("interLink reads %s as (-want +got):\n%s", body, diff)
	}
	without, err := interLinkReads(gpuReply(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(without, got); diff != "" {
		t.Errorf("the labels change what interLink reads (-without +with):\n%s", diff)
	}

	opts := pingstatus.Options{LabelNamespaces: []string{"nvidia.com"}}
	patch, warnings := pingstatus.Parse(body, opts)
	if len(warnings) != 0 {
		t.Errorf("pingnode warns: %v", warnings)
	}
	if diff := cmp.Diff(gpuLabels, patch.Labels); !patch.ReplaceLabels || diff != "" {
		t.Errorf("pingnode reads ReplaceLabels %v, labels (-want +got):\n%s", patch.ReplaceLabels, diff)
	}
	if !patch.ReplaceTaints || len(patch.Taints) != 1 || len(patch.Resources) != 4 {
		t.Errorf("pingnode reads taints %v (replace %v) and resources %v, want the reply's", patch.Taints, patch.ReplaceTaints, patch.Resources)
	}
}

// TestInterLinkReadsTheLabelSamples: every shared sample reply with labels
// (bad and forbidden ones, null and {} among them) decodes in interLink
// without an error and gives it the reply's status and nothing else.
func TestInterLinkReadsTheLabelSamples(t *testing.T) {
	files, err := filepath.Glob("../../testdata/replies/labels*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample replies with labels: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := interLinkReads(body)
			if err != nil {
				t.Fatalf("interLink does not decode it: %v", err)
			}
			if diff := cmp.Diff(interLinkPingResponse{Status: "ok"}, got); diff != "" {
				t.Errorf("interLink reads (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepSendsLabelsOnClientGo133: the object patch carries the plugin's
// labels and their ownership annotation through client-go v0.33.1, beside
// its taints; the administrator's labels stay, and a second identical
// ping sends nothing.
func TestStepSendsLabelsOnClientGo133(t *testing.T) {
	node, err := readNode("../../testdata/nodes/interlink-node.json")
	if err != nil {
		t.Fatal(err)
	}
	body := gpuReply(t, gpuLabels)
	opts := nodeapply.Options{Reply: pingstatus.Options{LabelNamespaces: []string{"nvidia.com"}}}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	client := fake.NewSimpleClientset(node)

	if _, err := Step(ctx, client, node.Name, nodeapply.Ping{Body: body, At: at}, opts); err != nil {
		t.Fatal(err)
	}
	stored, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for key, value := range gpuLabels {
		if got, ok := stored.Labels[key]; !ok || got != value {
			t.Errorf("stored label %s = %q (present %v), want %q", key, got, ok, value)
		}
	}
	for key, value := range node.Labels {
		if stored.Labels[key] != value {
			t.Errorf("label %s=%s was lost: stored %q", key, value, stored.Labels[key])
		}
	}
	const owned = "feature.node.kubernetes.io/cpu-model.vendor_id,nvidia.com/gpu.product"
	if got := stored.Annotations[nodeapply.DefaultLabelOwnershipAnnotation]; got != owned {
		t.Errorf("stored %s = %q, want %q", nodeapply.DefaultLabelOwnershipAnnotation, got, owned)
	}
	if !hasTaint(stored, "slurm.example.com/drain") {
		t.Errorf("stored taints %v lack the plugin's", stored.Spec.Taints)
	}

	assertSteady(ctx, t, client, node.Name, nodeapply.Ping{Body: body, At: at.Add(5 * time.Second)}, opts)
}
