package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// TestExampleManifests: the manifests README.md applies
// (testdata/gpu.yaml, testdata/t4.yaml) are the objects it names, each
// decoded strictly (a field Kubernetes does not know fails it), and the
// pod tolerates the provider's taints, so that it can land on the node.
func TestExampleManifests(t *testing.T) {
	objects := func(file string) []runtime.Object {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		decode := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		var out []runtime.Object
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			obj, _, err := decode.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			out = append(out, obj)
		}
	}
	gpu := objects("testdata/gpu.yaml")
	if len(gpu) != 3 {
		t.Fatalf("testdata/gpu.yaml: %d objects, want the class, the claim template and the pod", len(gpu))
	}
	class, ok1 := gpu[0].(*resourcev1.DeviceClass)
	template, ok2 := gpu[1].(*resourcev1.ResourceClaimTemplate)
	pod, ok3 := gpu[2].(*corev1.Pod)
	switch {
	case !ok1 || class.Name != "gpu.nvidia.com":
		t.Errorf("testdata/gpu.yaml: first %T, want the DeviceClass gpu.nvidia.com", gpu[0])
	case !ok2 || template.Name != "large-gpu":
		t.Errorf("testdata/gpu.yaml: second %T, want the ResourceClaimTemplate large-gpu", gpu[1])
	case !ok3 || pod.Name != "trainer" || len(pod.Spec.ResourceClaims) != 1 || *pod.Spec.ResourceClaims[0].ResourceClaimTemplateName != "large-gpu":
		t.Errorf("testdata/gpu.yaml: third %T, want the pod trainer, which claims from large-gpu", gpu[2])
	}
	if ok3 {
		node := vnode.StaticNode("pingnode-virtual")
		for _, taint := range node.Spec.Taints {
			tolerated := false
			for _, toleration := range pod.Spec.Tolerations {
				tolerated = tolerated || toleration.ToleratesTaint(klog.Background(), &taint, false)
			}
			if !tolerated {
				t.Errorf("testdata/gpu.yaml: the pod does not tolerate the node's taint %s", taint.ToString())
			}
		}
	}
	t4 := objects("testdata/t4.yaml")
	if class, ok := t4[0].(*resourcev1.DeviceClass); len(t4) != 1 || !ok || class.Spec.ExtendedResourceName == nil || *class.Spec.ExtendedResourceName != "example.com/t4" {
		t.Errorf("testdata/t4.yaml: %v, want one DeviceClass that serves example.com/t4", t4)
	}
}
