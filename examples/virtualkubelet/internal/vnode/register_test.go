package vnode

import (
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
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

// TestRefreshKubeletEndpoint: a node that serves its kubelet API
// publishes its InternalIP and port, in the status patch of its version
// (one write), and only once; a node that serves none leaves the
// addresses and port another writer published.
func TestRefreshKubeletEndpoint(t *testing.T) {
	const name = "vk-unit-endpoint"
	old := StaticNode(name)
	old.Status.NodeInfo.KubeletVersion = "v1.30.0"
	old.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "interlink-vk"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.9"}}
	old.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250

	t.Run("none served", func(t *testing.T) {
		client := fake.NewClientset(old.DeepCopy())
		p := New(Config{Static: StaticNode(name)}, client, slog.New(slog.DiscardHandler))
		got, err := p.refresh(t.Context(), old.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(old.Status.Addresses, got.Status.Addresses); diff != "" || got.Status.DaemonEndpoints != old.Status.DaemonEndpoints {
			t.Errorf("addresses (-want +got):\n%s\nport %d, want %d", diff, got.Status.DaemonEndpoints.KubeletEndpoint.Port, 10250)
		}
	})
	t.Run("served", func(t *testing.T) {
		client := fake.NewClientset(old.DeepCopy())
		endpoint := KubeletEndpoint{IP: "10.0.0.7", Port: 10255}
		p := New(Config{Static: StaticNode(name), Kubelet: endpoint}, client, slog.New(slog.DiscardHandler))
		got, err := p.refresh(t.Context(), old.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}}
		if diff := cmp.Diff(want, got.Status.Addresses); diff != "" {
			t.Errorf("addresses (-want +got):\n%s", diff)
		}
		if port := got.Status.DaemonEndpoints.KubeletEndpoint.Port; port != 10255 {
			t.Errorf("kubelet port %d, want 10255", port)
		}
		if got.Status.NodeInfo != StaticNode(name).Status.NodeInfo {
			t.Errorf("nodeInfo %+v, want the static one", got.Status.NodeInfo)
		}
		if n := len(client.Actions()); n != 1 {
			t.Errorf("%d requests, want 1, the status patch: %v", n, client.Actions())
		}
		client.ClearActions()
		if _, err := p.refresh(t.Context(), got); err != nil {
			t.Fatal(err)
		}
		if n := len(client.Actions()); n != 0 {
			t.Errorf("a node that publishes its endpoint: %d requests, want none: %v", n, client.Actions())
		}
	})
}
