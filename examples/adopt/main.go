// Command adopt is one ping step of a provider that lives on interLink's
// Kubernetes: its module requires k8s.io/client-go, k8s.io/api and
// k8s.io/apimachinery v0.33.1, and importing pingnode must leave them
// there. It reads a node and a reply, applies the reply the way a provider
// does, sends the two patches through client-go, and prints the node as
// the API sees it afterwards. interLink itself decodes the same reply into
// its own types, which have no labels field: interlink_test.go shows that
// it reads a reply with labels as it reads one without.
//
//	go run . -node ../../testdata/nodes/interlink-node.json ../../testdata/replies/slurm-taints.json
//
// CI builds this module with `go mod tidy -diff` and checks that client-go
// is still v0.33.1: the day the library requires a newer Kubernetes than
// interLink's, this module's build list moves and CI fails.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pingnode/pingnode/nodeapply"
)

func main() {
	nodeFile := flag.String("node", "", "the node as stored, JSON")
	flag.Parse()
	if *nodeFile == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: adopt -node NODE.json REPLY")
		os.Exit(2)
	}
	node, err := readNode(*nodeFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	body, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	client := fake.NewSimpleClientset(node)
	res, err := Step(ctx, client, node.Name, nodeapply.Ping{Body: body, At: time.Now()}, nodeapply.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, c := range res.Changes {
		fmt.Println(c)
	}
	stored, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("stored: cpu %s, memory %s, %d taints, %d labels\n",
		stored.Status.Allocatable.Cpu(), stored.Status.Allocatable.Memory(), len(stored.Spec.Taints), len(stored.Labels))
}

func readNode(path string) (*corev1.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var node corev1.Node
	if err := json.Unmarshal(b, &node); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &node, nil
}

// Step is one ping of a provider that sends its own patches: it reads the
// node, parses the reply in ping.Body, applies it, and sends the object
// patch (taints, the plugin's labels and their ownership annotations) to
// the node and the status patch to its status subresource, only when
// something changed.
func Step(ctx context.Context, client kubernetes.Interface, name string, ping nodeapply.Ping, opts nodeapply.Options) (nodeapply.Result, error) {
	nodes := client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nodeapply.Result{}, err
	}
	res := nodeapply.Apply(node, ping, opts) // Apply reads the ping's body (nodeapply.Judge)
	if len(res.Changes) == 0 {
		return res, nil
	}
	if p := res.ObjectPatch(); p != nil {
		if _, err := nodes.Patch(ctx, name, types.StrategicMergePatchType, p, metav1.PatchOptions{}); err != nil {
			return res, fmt.Errorf("object patch: %w", err)
		}
	}
	if p := res.StatusPatch(); p != nil {
		if _, err := nodes.Patch(ctx, name, types.StrategicMergePatchType, p, metav1.PatchOptions{}, "status"); err != nil {
			return res, fmt.Errorf("status patch: %w", err)
		}
	}
	return res, nil
}
