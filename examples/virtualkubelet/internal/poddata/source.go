package poddata

import (
	"context"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NodeUser is the user name of node's kubelet, which the Node authorizer
// authorizes: system:node:<node>.
func NodeUser(node string) string { return "system:node:" + node }

// NodeSource returns the [Source] of each node: the API server of
// config, each request impersonating the node's kubelet ([NodeUser],
// with no group: constrained impersonation gives it system:nodes). One
// client a node, made at its first read.
func NodeSource(config *rest.Config) func(node string) (Source, error) {
	var mu sync.Mutex
	clients := map[string]Source{}
	return func(node string) (Source, error) {
		mu.Lock()
		defer mu.Unlock()
		if s, ok := clients[node]; ok {
			return s, nil
		}
		c := rest.CopyConfig(config)
		c.Impersonate = rest.ImpersonationConfig{UserName: NodeUser(node)}
		client, err := kubernetes.NewForConfig(c)
		if err != nil {
			return nil, err
		}
		s := ClientSource{Client: client}
		clients[node] = s
		return s, nil
	}
}

// ClientSource is the [Source] of a client.
type ClientSource struct{ Client kubernetes.Interface }

func (s ClientSource) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return s.Client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (s ClientSource) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return s.Client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (s ClientSource) Token(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return s.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, req, metav1.CreateOptions{})
}
