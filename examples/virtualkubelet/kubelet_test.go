package main

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/kubeletapi"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// TestKubeletFlags: the kubelet API's flags are refused when they cannot
// work, and -node-ip is the host of -kubelet-addr when that is an IP.
func TestKubeletFlags(t *testing.T) {
	tests := []struct {
		name   string
		flags  kubeletFlags
		ok     bool
		nodeIP string
	}{
		{"none", kubeletFlags{}, true, ""},
		{"an IP", kubeletFlags{addr: "127.0.0.1:0"}, true, "127.0.0.1"},
		{"every address, the pod's IP", kubeletFlags{addr: ":10250", nodeIP: "10.1.2.3"}, true, "10.1.2.3"},
		{"a certificate", kubeletFlags{addr: "10.1.2.3:10250", cert: "c.pem", key: "k.pem"}, true, "10.1.2.3"},
		{"every address, no IP", kubeletFlags{addr: ":10250"}, false, ""},
		{"0.0.0.0", kubeletFlags{addr: "0.0.0.0:10250"}, false, ""},
		{"a host name", kubeletFlags{addr: "localhost:10250"}, false, ""},
		{"a node IP that is none", kubeletFlags{addr: ":10250", nodeIP: "node-1"}, false, ""},
		{"no port", kubeletFlags{addr: "127.0.0.1"}, false, ""},
		{"a port too large", kubeletFlags{addr: "127.0.0.1:65536"}, false, ""},
		{"a certificate without its key", kubeletFlags{addr: "127.0.0.1:0", cert: "c.pem"}, false, ""},
		{"a node IP without an address", kubeletFlags{nodeIP: "10.1.2.3"}, false, ""},
		{"a client CA without an address", kubeletFlags{clientCA: "ca.pem"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.flags
			err := k.check()
			if (err == nil) != tt.ok {
				t.Fatalf("check: %v, want ok %v", err, tt.ok)
			}
			if tt.ok && k.nodeIP != tt.nodeIP {
				t.Errorf("-node-ip %q, want %q", k.nodeIP, tt.nodeIP)
			}
		})
	}
}

// TestPodLogs: a pod's log is asked of the plugin of the pod's node, as
// interLink's Virtual Kubelet asks it (the pod's UID, its container, the
// options); a part's node's pod, of the parts' plugin. A pod that is not
// there, is on another node, or has no such container is not found, and
// the plugin is not asked.
func TestPodLogs(t *testing.T) {
	asked := make(chan podapi.LogRequest, 10)
	plugin := func() string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req podapi.LogRequest
			if r.URL.Path != podapi.LogsPath || json.NewDecoder(r.Body).Decode(&req) != nil {
				http.Error(w, "not a log request", http.StatusBadRequest)
				return
			}
			asked <- req
			_, _ = io.WriteString(w, "the log of "+req.PodUID+"\n")
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/status"
	}
	pod := func(name, node, uid string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + uid)},
			Spec:       corev1.PodSpec{NodeName: node, InitContainers: []corev1.Container{{Name: "init"}}, Containers: []corev1.Container{{Name: "job"}}},
		}
	}
	client := fake.NewClientset(pod("ours", "vk-a", "1"), pod("other", "elsewhere", "2"), pod("part", "pingnode-virtual-cn001", "3"))
	configs := []vnode.Config{configOfArgs(t, "-plugin", plugin(), "-node", "vk-a"), configOfArgs(t, "-parts", "-plugin", plugin())}
	logs, err := podLogs(client, configs, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ pod, container, uid string }{{"ours", "job", "uid-1"}, {"ours", "init", "uid-1"}, {"part", "job", "uid-3"}} {
		stream, err := logs(t.Context(), "ns", tt.pod, tt.container, podapi.LogOptions{Tail: 2})
		if err != nil {
			t.Fatalf("%s/%s: %v", tt.pod, tt.container, err)
		}
		got, _ := io.ReadAll(stream)
		_ = stream.Close()
		if string(got) != "the log of "+tt.uid+"\n" {
			t.Errorf("%s/%s: %q", tt.pod, tt.container, got)
		}
		want := podapi.LogRequest{Namespace: "ns", PodUID: tt.uid, PodName: tt.pod, ContainerName: tt.container, Opts: podapi.LogOptions{Tail: 2}}
		if req := <-asked; req != want {
			t.Errorf("%s/%s: the plugin was asked %+v, want %+v", tt.pod, tt.container, req, want)
		}
	}
	for _, tt := range []struct{ pod, container string }{{"gone", "job"}, {"other", "job"}, {"ours", "nope"}} {
		if _, err := logs(t.Context(), "ns", tt.pod, tt.container, podapi.LogOptions{}); !errors.Is(err, kubeletapi.ErrNotFound) {
			t.Errorf("%s/%s: %v, want not found", tt.pod, tt.container, err)
		}
	}
	if n := len(asked); n != 0 {
		t.Errorf("the plugin was asked %d more times, want none", n)
	}
}
