package main

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pingnode/pingnode/nodeapply"
)

// TestBuildListIsInterLinks fails the day importing pingnode raises a
// provider on interLink's Kubernetes (v0.33.1) to a newer one.
func TestBuildListIsInterLinks(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build information")
	}
	want := map[string]string{"k8s.io/api": "v0.33.1", "k8s.io/apimachinery": "v0.33.1", "k8s.io/client-go": "v0.33.1"}
	for _, dep := range info.Deps {
		v, ok := want[dep.Path]
		if !ok {
			continue
		}
		if dep.Version != v {
			t.Errorf("%s is %s in the build, want %s", dep.Path, dep.Version, v)
		}
		delete(want, dep.Path)
	}
	for path := range want {
		t.Errorf("%s is not in the build", path)
	}
}

// TestStepOnClientGo133 runs a ping through client-go v0.33.1: the patches
// apply, and a second identical ping sends nothing.
func TestStepOnClientGo133(t *testing.T) {
	node, err := readNode("../../testdata/nodes/interlink-node.json")
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"status":"ok","resources":{"cpu":"64"},"taints":[{"key":"slurm.example.com/drain","value":"maintenance","effect":"NoSchedule"}]}`)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	client := fake.NewSimpleClientset(node)

	res, err := Step(ctx, client, node.Name, nodeapply.Ping{Body: body, At: at}, nodeapply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) == 0 {
		t.Fatal("the first ping changed nothing")
	}
	stored, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.Status.Allocatable.Cpu().String(); got != "64" {
		t.Errorf("stored allocatable cpu = %s, want 64", got)
	}
	if !hasTaint(stored, "slurm.example.com/drain") {
		t.Errorf("stored taints %v lack the plugin's", stored.Spec.Taints)
	}
	for _, kept := range node.Spec.Taints {
		if !hasTaint(stored, kept.Key) {
			t.Errorf("taint %s was lost", kept.Key)
		}
	}

	assertSteady(ctx, t, client, node.Name, nodeapply.Ping{Body: body, At: at.Add(5 * time.Second)}, nodeapply.Options{})
}

func hasTaint(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// assertSteady applies ping again and fails unless it changes nothing and
// reads only: a steady ping costs the API server no write.
func assertSteady(ctx context.Context, t *testing.T, client *fake.Clientset, name string, ping nodeapply.Ping, opts nodeapply.Options) {
	t.Helper()
	client.ClearActions()
	res, err := Step(ctx, client, name, ping, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 0 {
		t.Errorf("the same ping again changed %v", res.Changes)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("a steady ping sent %s %s", a.GetVerb(), a.GetSubresource())
		}
	}
}
