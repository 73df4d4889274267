package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/pingstatus"
)

// TestMain runs the command itself, main and its exit status, when
// $PINGNODE_PLUGIN_ARGS holds its arguments (a JSON list): see
// runCommand.
func TestMain(m *testing.M) {
	if list := os.Getenv("PINGNODE_PLUGIN_ARGS"); list != "" {
		var args []string
		if err := json.Unmarshal([]byte(list), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"plugin"}, args...)
		main()
		return
	}
	os.Exit(m.Run())
}

// runCommand runs the plugin's command with args, in a child process, and
// returns its exit status and what it wrote to stderr. The command must
// exit by itself: a refused flag, or -h.
func runCommand(t *testing.T, args ...string) (int, string) {
	t.Helper()
	list, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PINGNODE_PLUGIN_ARGS="+string(list))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stderr.String()
}

func get(t *testing.T, b Backend) (int, []byte) {
	t.Helper()
	return getWith(t, b, pingstatus.Options{})
}

// getWith is get with a plugin that checks its reply with opts.
func getWith(t *testing.T, b Backend, opts pingstatus.Options) (int, []byte) {
	t.Helper()
	server := httptest.NewServer(Handler(func() Backend { return b }, nil, Options{Check: opts}))
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
	code, body := get(t, Backend{
		CPU: "64", Memory: "250000Mi", Pods: "500", EphemeralStorage: "1800Gi", Hugepages: map[string]string{"2Mi": "4Gi", "1Gi": "0"},
		Devices: map[string]int{"nvidia.com/gpu": 4, "xilinx.com/fpga": 0}, Draining: true,
	})
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
		"ephemeral-storage": resource.MustParse("1800Gi"), "hugepages-2Mi": resource.MustParse("4Gi"), "hugepages-1Gi": resource.MustParse("0"),
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
	server := httptest.NewServer(RequireToken(file, Handler(func() Backend { return Backend{CPU: "8", Memory: "16Gi", Pods: "110"} }, nil, Options{})))
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

// gpuLabels describe an A100 node as GPU feature discovery and
// node-feature-discovery would: nvidia.com needs the provider's leave.
var gpuLabels = map[string]string{
	"nvidia.com/gpu.product":                         "NVIDIA-A100-SXM4-80GB",
	"nvidia.com/gpu.count":                           "8",
	"feature.node.kubernetes.io/cpu-model.vendor_id": "AMD",
}

// TestReplyCarriesLabels: the served reply holds the backend's labels in
// the wire type's labels object, Validate with the provider's options
// (nvidia.com allowed) finds nothing, and Parse takes them all as the
// plugin's whole set.
func TestReplyCarriesLabels(t *testing.T) {
	opts := pingstatus.Options{LabelNamespaces: []string{"nvidia.com"}}
	code, body := getWith(t, Backend{CPU: "64", Memory: "250000Mi", Pods: "500", Labels: gpuLabels}, opts)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var reply pingstatus.PingResponse
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatalf("reply %s does not decode: %v", body, err)
	}
	if diff := cmp.Diff(gpuLabels, reply.Labels); diff != "" {
		t.Errorf("labels in the reply (-want +got):\n%s", diff)
	}
	if problems := reply.Validate(opts); len(problems) != 0 {
		t.Errorf("Validate with nvidia.com allowed: %v", problems)
	}
	patch, warnings := pingstatus.Parse(body, opts)
	if len(warnings) != 0 {
		t.Errorf("Parse warnings: %v", warnings)
	}
	if diff := cmp.Diff(gpuLabels, patch.Labels); !patch.ReplaceLabels || diff != "" {
		t.Errorf("ReplaceLabels %v, labels (-want +got):\n%s", patch.ReplaceLabels, diff)
	}
}

// TestLabelsOutsideTheProvidersNamespacesAreNotServed: checked with the
// default options, which allow no nvidia.com label, the same backend gets
// a 500 that names each label a provider would refuse, and not the one it
// would take.
func TestLabelsOutsideTheProvidersNamespacesAreNotServed(t *testing.T) {
	code, body := get(t, Backend{CPU: "64", Memory: "250000Mi", Pods: "500", Labels: gpuLabels})
	if code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500: %s", code, body)
	}
	for _, want := range []string{"labels[nvidia.com/gpu.count]", "labels[nvidia.com/gpu.product]"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body %q does not name %s", body, want)
		}
	}
	if strings.Contains(string(body), "labels[feature.node.kubernetes.io") {
		t.Errorf("body %q names a label every provider takes", body)
	}
}

// TestNoLabelsSendsAnEmptySet: a backend without labels sends {}, the
// plugin's whole (empty) set, which removes the labels it set earlier,
// rather than no labels at all, which would leave them.
func TestNoLabelsSendsAnEmptySet(t *testing.T) {
	_, body := get(t, Backend{CPU: "8", Memory: "16Gi", Pods: "110"})
	if !strings.Contains(string(body), `"labels":{}`) {
		t.Errorf("reply %s has no empty labels object", body)
	}
	patch, _ := pingstatus.Parse(body, pingstatus.Options{})
	if !patch.ReplaceLabels || len(patch.Labels) != 0 {
		t.Errorf("ReplaceLabels %v with %v, want true with none", patch.ReplaceLabels, patch.Labels)
	}
}

// TestLabelsProblems: the -label-namespaces and -label flags are checked
// at start as a provider with those namespaces checks the reply.
func TestLabelsProblems(t *testing.T) {
	tests := []struct {
		name       string
		namespaces []string
		labels     map[string]string
		want       []string // each a substring of one problem, in order
	}{
		{"none", nil, nil, nil},
		{"node-feature-discovery's", nil, map[string]string{"feature.node.kubernetes.io/custom-cvmfs": "true", "profile.node.kubernetes.io/stack": "el9"}, nil},
		{"allowed namespace", []string{"nvidia.com"}, gpuLabels, nil},
		{"subdomain of an allowed namespace", []string{"example.com"}, map[string]string{"gpu.example.com/model": "x"}, nil},
		{"namespace not allowed", nil, gpuLabels, []string{"-label: labels[nvidia.com/gpu.count]", "-label: labels[nvidia.com/gpu.product]"}},
		{"kubernetes.io", []string{"kubernetes.io"}, nil, []string{`-label-namespaces: "kubernetes.io" cannot be allowed`}},
		{"node-restriction", []string{"node-restriction.kubernetes.io"}, nil, []string{`-label-namespaces: "node-restriction.kubernetes.io" cannot be allowed`}},
		{"not a domain", []string{"nvidia.com", "Not_A_Domain", "k8s.io"}, nil, []string{`"Not_A_Domain" cannot be allowed: `, `"k8s.io" cannot be allowed`}},
		{"empty namespace", []string{""}, nil, []string{`-label-namespaces: "" cannot be allowed`}},
		{"unprefixed key", nil, map[string]string{"gpu": "a100"}, []string{"-label: labels[gpu]"}},
		{"bad value", nil, map[string]string{"feature.node.kubernetes.io/model": "A100 80GB"}, []string{"-label: labels[feature.node.kubernetes.io/model]"}},
		{"bad key", nil, map[string]string{"feature.node.kubernetes.io/": "x"}, []string{`-label: labels["feature.node.kubernetes.io/"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := labelsProblems(tt.labels, pingstatus.Options{LabelNamespaces: tt.namespaces})
			matched := len(got) == len(tt.want)
			for i := 0; matched && i < len(got); i++ {
				matched = strings.Contains(got[i], tt.want[i])
			}
			if !matched {
				t.Errorf("labelsProblems = %q, want one each containing %q", got, tt.want)
			}
			if len(tt.want) == 0 {
				if problems := (pingstatus.PingResponse{NodeResponse: pingstatus.NodeResponse{Labels: tt.labels}}).Validate(pingstatus.Options{LabelNamespaces: tt.namespaces}); len(problems) != 0 {
					t.Errorf("flags pass but Validate finds %v", problems)
				}
			}
		})
	}
}

// TestDevices: the sample's -devices file is a reply a provider takes
// without a warning, its groups published as named devices; without
// -devices the reply says nothing of devices (no news, not "none"); and a
// -gpu count beside devices, but 0, is refused at start, as the provider
// would refuse it.
func TestDevices(t *testing.T) {
	data, err := os.ReadFile("testdata/gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var b Backend
	if err := json.Unmarshal(data, &b.DeviceGroups); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(Reply(b))
	if err != nil {
		t.Fatal(err)
	}
	patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
	if len(warnings) != 0 || len(patch.Devices) != 2 || patch.Devices[0].Name != "a100" || patch.Devices[1].Count != 4 {
		t.Errorf("the sample's devices: %+v, warnings %v", patch.Devices, warnings)
	}
	if problems := devicesProblems(b); problems != nil {
		t.Errorf("devicesProblems = %v, want none", problems)
	}
	if reply := Reply(Backend{}); reply.Devices != nil {
		t.Errorf("without -devices the reply lists devices: %v", reply.Devices)
	}
	b.Devices = map[string]int{"nvidia.com/gpu": 2}
	if problems := devicesProblems(b); len(problems) != 1 || !strings.Contains(problems[0], "resources.accelerators[0].available") {
		t.Errorf("a -gpu count beside devices: %v, want one problem", problems)
	}
	b.Devices = map[string]int{"nvidia.com/gpu": 0} // clears an earlier count
	if problems := devicesProblems(b); problems != nil {
		t.Errorf("a -gpu count of 0 beside devices: %v, want none", problems)
	}
}

// TestBasis: without -basis the reply says nothing of its basis, which
// the provider reads as available; with it, the reply says it.
func TestBasis(t *testing.T) {
	for _, tt := range []struct {
		basis string
		sent  bool
		want  pingstatus.Basis
	}{
		{"", false, ""},
		{"available", true, pingstatus.BasisAvailable},
		{"total", true, pingstatus.BasisTotal},
	} {
		_, body := get(t, Backend{CPU: "64", Memory: "250000Mi", Pods: "500", Basis: tt.basis})
		if sent := strings.Contains(string(body), `"basis"`); sent != tt.sent {
			t.Errorf("-basis %q: basis sent %v, want %v: %s", tt.basis, sent, tt.sent, body)
		}
		patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
		if len(warnings) != 0 || patch.Basis != tt.want {
			t.Errorf("-basis %q: Parse gives basis %q with warnings %v, want %q", tt.basis, patch.Basis, warnings, tt.want)
		}
	}
}

// TestFlags: the flags are checked at start, each refusal naming its
// flag, with exit status 2 (errUsage), as the flag package does; -h is not
// a refusal, and says what a -devices count is under each basis.
func TestFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		err    error
		stderr []string // each a substring of what is said
		basis  string
	}{
		{"defaults", nil, nil, nil, ""},
		{"basis total", []string{"-basis", "total"}, nil, nil, "total"},
		{"basis available", []string{"-basis", "available"}, nil, nil, "available"},
		{"basis bad", []string{"-basis", "free"}, errUsage, []string{`invalid value "free" for flag -basis: want available or total`}, ""},
		{"basis empty", []string{"-basis="}, errUsage, []string{`invalid value "" for flag -basis: want available or total`}, ""},
		{"key without a certificate", []string{"-key-file", "k.pem"}, errUsage, []string{"plugin: -cert-file and -key-file go together"}, ""},
		{"gpu beside devices", []string{"-devices", "testdata/gpus.json", "-gpu", "nvidia.com/gpu=2"}, errUsage, []string{"plugin: -devices: resources.accelerators[0].available"}, ""},
		{"devices and total", []string{"-devices", "testdata/gpus.json", "-basis", "total"}, nil, nil, "total"},
		{"an argument", []string{"-cpu", "64", "128"}, errUsage, []string{`plugin: no arguments, only flags: got "128"`}, ""},
		{"help", []string{"-h"}, flag.ErrHelp, []string{
			"-basis value", "-devices value",
			"with the default basis (available), how many of its devices are free now on the backend, so that a GPU a pod already runs on is not in it",
			"with -basis total, every GPU of the group the backend gives the node",
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			c, err := parseFlags(tt.args, &stderr)
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v; said:\n%s", err, tt.err, stderr.String())
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("no %q in:\n%s", want, stderr.String())
				}
			}
			if tt.stderr == nil && stderr.Len() > 0 {
				t.Errorf("said:\n%s", stderr.String())
			}
			if err == nil && c.backend.Basis != tt.basis {
				t.Errorf("basis %q, want %q", c.backend.Basis, tt.basis)
			}
		})
	}
}

// TestDeviceTaints: a group's taints in the -devices file reach the
// reply, and the provider reads them; a taint with a node's effect
// refuses the group at start, as the provider would refuse it.
func TestDeviceTaints(t *testing.T) {
	var groups []pingstatus.DeviceResponse
	if err := json.Unmarshal([]byte(`[{"name": "a100-xid", "count": 1, "attributes": {"type": {"string": "gpu"}},
		"taints": [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute"}]}]`), &groups); err != nil {
		t.Fatal(err)
	}
	b := Backend{CPU: "64", Memory: "250000Mi", Pods: "500", DeviceGroups: groups}
	if problems := devicesProblems(b); problems != nil {
		t.Fatalf("devicesProblems = %v, want none", problems)
	}
	_, body := get(t, b)
	patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
	want := []pingstatus.DeviceTaint{{Key: "gpu.nvidia.com/xid", Value: "79", Effect: pingstatus.DeviceTaintNoExecute}}
	if len(warnings) != 0 || len(patch.Devices) != 1 || cmp.Diff(want, patch.Devices[0].Taints) != "" {
		t.Errorf("the provider reads %+v, warnings %v; want the taints %v", patch.Devices, warnings, want)
	}
	b.DeviceGroups[0].Taints[0].Effect = "PreferNoSchedule"
	if problems := devicesProblems(b); len(problems) != 1 || !strings.Contains(problems[0], "-devices: devices[0].taints[0].effect") {
		t.Errorf("a node's effect on a device: %v, want one problem", problems)
	}
}

// TestCommandExitStatus: the command refuses a bad flag with exit status
// 2 and a message that names the flag, and exits 0 for -h.
func TestCommandExitStatus(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-basis", "free"}, 2, `invalid value "free" for flag -basis: want available or total`},
		{[]string{"-devices", "testdata/gpus.json", "-gpu", "nvidia.com/gpu=2"}, 2, "plugin: -devices: resources.accelerators[0].available"},
		{[]string{"-h"}, 0, "-basis value"},
	} {
		code, stderr := runCommand(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("plugin %s: exit %d, want %d, with %q in:\n%s", strings.Join(tt.args, " "), code, tt.code, tt.want, stderr)
		}
	}
}
