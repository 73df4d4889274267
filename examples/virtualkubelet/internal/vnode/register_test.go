package vnode

import (
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRefresh: a node stored before the run (interLink's, or this
// provider's before an upgrade) takes this provider's static labels and
// version, one patch each, and keeps its other labels; a node that has
// them costs no write.
func TestRefresh(t *testing.T) {
	const name = "vk-unit-refresh"
	old := StaticNode(name)
	delete(old.Labels, "kubernetes.io/role")
	old.Labels["type"] = "other"
	old.Labels["site.example.com/rack"] = "r1"
	old.Status.NodeInfo.KubeletVersion = "v1.30.0"
	client := fake.NewClientset(old)
	static := StaticNode(name)
	p := New(Config{Static: static}, client, slog.New(slog.DiscardHandler))

	got, err := p.refresh(t.Context(), old)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"site.example.com/rack": "r1"}
	for k, v := range static.Labels {
		want[k] = v
	}
	if diff := cmp.Diff(want, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if got.Status.NodeInfo != static.Status.NodeInfo {
		t.Errorf("nodeInfo %+v, want %+v", got.Status.NodeInfo, static.Status.NodeInfo)
	}
	if n := len(client.Actions()); n != 2 {
		t.Errorf("%d requests, want 2: a patch of the labels, one of the status: %v", n, client.Actions())
	}

	client.ClearActions()
	if _, err := p.refresh(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("a node with the static labels and version: %d requests, want none: %v", n, client.Actions())
	}
}
