// Command virtualkubelet is a Virtual Kubelet provider built on pingnode:
// it registers a virtual node, pings a plugin, and keeps the node's
// capacity, allocatable and taints true to the plugin's replies.
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -plugin http://127.0.0.1:4000/status
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pingnode/pingnode/nodeapply"
)

// StaticTaintKey is the taint of this provider's static configuration.
const StaticTaintKey = "virtual-node.example.com/site"

// StaticNode is the node as this provider registers it.
func StaticNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("100"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"type":                   "virtual-kubelet",
				"kubernetes.io/role":     "agent",
				"kubernetes.io/hostname": name,
			},
		},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: nodeapply.DefaultProtectedKey, Value: "true", Effect: corev1.TaintEffectNoSchedule},
			{Key: StaticTaintKey, Value: "remote", Effect: corev1.TaintEffectNoSchedule},
		}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			// No conditions: the first ping, right after registration,
			// sets Ready and the connectivity condition with true times.
			NodeInfo: corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "virtual-kubelet", KubeletVersion: "v1.37.2"},
		},
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	name := flag.String("node", "pingnode-virtual", "node name")
	plugin := flag.String("plugin", "http://127.0.0.1:4000/status", "the plugin's status URL")
	interval := flag.Duration("interval", 5*time.Second, "how often to ping the plugin")
	timeout := flag.Duration("timeout", 3*time.Second, "how long one ping may take")
	heartbeat := flag.Duration("heartbeat", 10*time.Second, "the node controller's status interval")
	compat := flag.Bool("compat", false, "interLink 0.6.2's taint rule: replace every taint but the protected ones")
	grace := flag.Duration("grace", nodeapply.DefaultGrace, "how long the plugin may fail to answer before the node is not Ready")
	countHeld := flag.Bool("held", true, "read the plugin's figures as available now, and add what this node's running pods hold")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*kubeconfig, Config{
		Static: StaticNode(*name), StaticKeys: []string{StaticTaintKey}, PluginURL: *plugin,
		Interval: *interval, Timeout: *timeout, Heartbeat: *heartbeat, Compat: *compat, Grace: *grace, CountHeld: *countHeld,
	}, log); err != nil {
		log.Error("provider stopped", "error", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, cfg Config, log *slog.Logger) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("provider starting", "node", cfg.Static.Name, "plugin", cfg.PluginURL)
	return NewProvider(cfg, client.CoreV1(), log).Run(ctx)
}
