package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/kubeletapi"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// kubeletFlags are the flags of the kubelet API the provider serves for
// its nodes, so that kubectl logs of their pods works: the address it
// listens on, the address its nodes publish, and its TLS.
type kubeletFlags struct {
	addr, nodeIP, cert, key, clientCA string
}

// register registers the kubelet API's flags on fs.
func (k *kubeletFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.addr, "kubelet-addr", "", "the `host:port` to serve the kubelet API of the nodes on, over TLS: kubectl logs of their pods, read from the plugin's /getLogs; each node publishes it (its InternalIP -node-ip, its kubelet port this port; port 0: any free one). Empty: none, and kubectl logs of their pods fails")
	fs.StringVar(&k.nodeIP, "node-ip", "", "with -kubelet-addr: the `IP` the nodes publish as their InternalIP, which the API server dials for kubectl logs (in a cluster, the provider's pod IP); empty: the host of -kubelet-addr, which must then be an IP other than 0.0.0.0 or ::")
	fs.StringVar(&k.cert, "kubelet-cert", "", "with -kubelet-addr: the serving certificate `file` (PEM), with -kubelet-key; empty: a self-signed one made at start for -node-ip, which the API server accepts unless it checks kubelets' certificates (--kubelet-certificate-authority)")
	fs.StringVar(&k.key, "kubelet-key", "", "with -kubelet-cert: its private key `file` (PEM)")
	fs.StringVar(&k.clientCA, "kubelet-client-ca", "", "with -kubelet-addr: the CA `file` (PEM) whose client certificates alone may read logs, the one that signs the API server's --kubelet-client-certificate; empty: any client that reaches the port")
}

// check returns a flag error for a kubelet flag that cannot work, and
// sets nodeIP when it is the host of addr.
func (k *kubeletFlags) check() error {
	if k.addr == "" {
		for name, v := range map[string]string{"node-ip": k.nodeIP, "kubelet-cert": k.cert, "kubelet-key": k.key, "kubelet-client-ca": k.clientCA} {
			if v != "" {
				return flagError(name, v, "want -kubelet-addr too: it serves no kubelet API without one")
			}
		}
		return nil
	}
	host, port, err := net.SplitHostPort(k.addr)
	if err != nil {
		return flagError("kubelet-addr", k.addr, "want host:port: %v", err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return flagError("kubelet-addr", k.addr, "want a port from 0 to 65535")
	}
	if k.nodeIP == "" {
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			return flagError("node-ip", k.nodeIP, "want the IP the API server dials: -kubelet-addr %q names none", k.addr)
		}
		k.nodeIP = host
	}
	if ip := net.ParseIP(k.nodeIP); ip == nil || ip.IsUnspecified() {
		return flagError("node-ip", k.nodeIP, "want an IP other than 0.0.0.0 or ::")
	}
	if (k.cert == "") != (k.key == "") {
		return flagError("kubelet-cert", k.cert, "want -kubelet-cert and -kubelet-key together (-kubelet-key %q)", k.key)
	}
	return nil
}

// serve listens on -kubelet-addr and serves the kubelet API of the nodes
// of configs there until ctx ends, and sets in each configuration the
// endpoint its node publishes. Without -kubelet-addr it does nothing.
func (k *kubeletFlags) serve(ctx context.Context, client kubernetes.Interface, configs []vnode.Config, log *slog.Logger) error {
	if k.addr == "" {
		return nil
	}
	tlsConfig, err := k.tls(time.Now())
	if err != nil {
		return err
	}
	logs, err := podLogs(client, configs, log)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", k.addr)
	if err != nil {
		return fmt.Errorf("-kubelet-addr: %w", err)
	}
	endpoint := vnode.KubeletEndpoint{IP: k.nodeIP, Port: int32(l.Addr().(*net.TCPAddr).Port)} //nolint:gosec // a TCP port fits
	for i := range configs {
		configs[i].Kubelet = endpoint
	}
	go func() {
		if err := kubeletapi.Serve(ctx, l, tlsConfig, kubeletapi.Handler(logs), slog.NewLogLogger(log.Handler(), slog.LevelWarn)); err != nil {
			log.Error("the kubelet API stopped", "error", err)
		}
	}()
	log.Info("serving the kubelet API", "addr", l.Addr().String(), "published", net.JoinHostPort(endpoint.IP, strconv.Itoa(int(endpoint.Port))))
	return nil
}

// tls is the kubelet API's TLS: the certificate of -kubelet-cert, or one
// made at now for -node-ip, and with -kubelet-client-ca the clients it
// signed alone.
func (k *kubeletFlags) tls(now time.Time) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if k.cert != "" {
		cert, err = tls.LoadX509KeyPair(k.cert, k.key)
	} else {
		cert, err = kubeletapi.SelfSigned([]string{k.nodeIP}, now)
	}
	if err != nil {
		return nil, fmt.Errorf("-kubelet-cert: %w", err)
	}
	var pool *x509.CertPool
	if k.clientCA != "" {
		pem, err := os.ReadFile(k.clientCA)
		if err != nil {
			return nil, fmt.Errorf("-kubelet-client-ca: %w", err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-kubelet-client-ca %s: no PEM certificate", k.clientCA)
		}
	}
	return kubeletapi.ServerTLS(cert, pool), nil
}

// podLogs returns the logs of the pods of the nodes of configs, each
// asked of its node's plugin (/getLogs) as interLink's Virtual Kubelet
// asks it (its GetLogs): the pod, found by its namespace and name (list,
// a right the provider has), bound to one of the nodes, and its UID. A
// pod that is not there, not on one of the nodes, or has no container of
// that name is [kubeletapi.ErrNotFound].
func podLogs(client kubernetes.Interface, configs []vnode.Config, log *slog.Logger) (kubeletapi.LogsFunc, error) {
	plugins := map[string]*pingclient.Client{} // by node name
	var parts *regexp.Regexp
	var partsPlugin *pingclient.Client
	for i := range configs {
		c, err := configs[i].PingClient(log)
		if err != nil {
			return nil, err
		}
		if configs[i].Parts != nil {
			parts, partsPlugin = regexp.MustCompile(configs[i].Parts.Pattern()), c
			continue
		}
		plugins[configs[i].Static.Name] = c
	}
	return func(ctx context.Context, namespace, name, container string, opts podapi.LogOptions) (io.ReadCloser, error) {
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(list.Items, func(p corev1.Pod) bool { return p.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("pod %s/%s: %w", namespace, name, kubeletapi.ErrNotFound)
		}
		pod := &list.Items[i]
		plugin := plugins[pod.Spec.NodeName]
		if plugin == nil && parts != nil && parts.MatchString(pod.Spec.NodeName) {
			plugin = partsPlugin
		}
		if plugin == nil {
			return nil, fmt.Errorf("pod %s/%s is on no node of this provider (%q): %w", namespace, name, pod.Spec.NodeName, kubeletapi.ErrNotFound)
		}
		if !hasContainer(pod, container) {
			return nil, fmt.Errorf("container %s is not in pod %s/%s: %w", container, namespace, name, kubeletapi.ErrNotFound)
		}
		stream, err := plugin.Logs(ctx, podapi.LogRequest{Namespace: namespace, PodUID: string(pod.UID), PodName: name, ContainerName: container, Opts: opts})
		if err != nil {
			return nil, fmt.Errorf("the plugin's log of %s/%s: %w", namespace, name, err)
		}
		return stream, nil
	}, nil
}

// hasContainer reports whether pod has a container, init or not, named
// name.
func hasContainer(pod *corev1.Pod, name string) bool {
	named := func(c corev1.Container) bool { return c.Name == name }
	return slices.ContainsFunc(pod.Spec.Containers, named) || slices.ContainsFunc(pod.Spec.InitContainers, named)
}
