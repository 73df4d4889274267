package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/pingstatus"
)

func get(t *testing.T, b Backend) (int, []byte) {
	t.Helper()
	server := httptest.NewServer(Handler(func() Backend { return b }))
	defer server.Close()
	resp, err := http.Get(server.URL + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// TestReplyParsesToTheBackend: the served reply, run through Parse as a
// provider would, is the backend, without a warning.
func TestReplyParsesToTheBackend(t *testing.T) {
	code, body := get(t, Backend{CPU: "64", Memory: "250000Mi", Pods: "500", Devices: map[string]int{"nvidia.com/gpu": 4, "xilinx.com/fpga": 0}, Draining: true})
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
	if len(warnings) != 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	want := corev1.ResourceList{
		"cpu": resource.MustParse("64"), "memory": resource.MustParse("250000Mi"), "pods": resource.MustParse("500"),
		"nvidia.com/gpu": resource.MustParse("4"), "xilinx.com/fpga": resource.MustParse("0"),
	}
	if diff := cmp.Diff(want, patch.Resources, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	wantTaints := []corev1.Taint{{Key: DrainKey, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	if !patch.ReplaceTaints || cmp.Diff(wantTaints, patch.Taints) != "" {
		t.Errorf("taints = %v (replace %v), want %v", patch.Taints, patch.ReplaceTaints, wantTaints)
	}
}

// TestNotDrainingSendsAnEmptyList: the plugin's whole list is empty, which
// removes its taint, rather than absent, which would leave it.
func TestNotDrainingSendsAnEmptyList(t *testing.T) {
	_, body := get(t, Backend{CPU: "8", Memory: "16Gi", Pods: "110"})
	if !strings.Contains(string(body), `"taints":[]`) {
		t.Errorf("reply %s has no empty taints list", body)
	}
	patch, _ := pingstatus.Parse(body, pingstatus.Options{})
	if !patch.ReplaceTaints || len(patch.Taints) != 0 {
		t.Errorf("ReplaceTaints %v with %v, want true with none", patch.ReplaceTaints, patch.Taints)
	}
}

// TestInvalidReplyIsNotServed: a backend the checks refuse gets a 500 that
// names the problems, not a reply that would change the node.
func TestInvalidReplyIsNotServed(t *testing.T) {
	code, body := get(t, Backend{CPU: "-1", Memory: "16Gi", Pods: "110", Devices: map[string]int{"gpu": 1}})
	if code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", code)
	}
	for _, want := range []string{"resources.cpu", "resources.accelerators[0].resourceType"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body %q does not name %s", body, want)
		}
	}
}

// TestRequireToken: a request without the token, or with another, gets
// 401; the token file is read at each request, so a rotated token is
// taken at once and the old one refused.
func TestRequireToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	write := func(token string) {
		if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first")
	server := httptest.NewServer(RequireToken(file, Handler(func() Backend { return Backend{CPU: "8", Memory: "16Gi", Pods: "110"} })))
	defer server.Close()
	status := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, server.URL+"/status", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		rotate, token string
		want          int
	}{
		{"", "first", http.StatusOK},
		{"", "", http.StatusUnauthorized},
		{"", "firs", http.StatusUnauthorized},
		{"second", "first", http.StatusUnauthorized},
		{"", "second", http.StatusOK},
	} {
		if tt.rotate != "" {
			write(tt.rotate)
		}
		if got := status(tt.token); got != tt.want {
			t.Errorf("token %q: status %d, want %d", tt.token, got, tt.want)
		}
	}
}
