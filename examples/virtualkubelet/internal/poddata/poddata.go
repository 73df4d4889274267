package poddata

import (
	"context"
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// Source reads a pod's objects from the cluster, as the pod's node.
type Source interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// Token asks for a token of the ServiceAccount of namespace.
	Token(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// ErrUnbound is the error of [Of] without a [Source] for a pod that uses
// a ConfigMap or a Secret: its data can be read only once it is bound.
var ErrUnbound = errors.New("the pod uses a ConfigMap or a Secret, which its node may read only once the pod is bound to it")

// Missing is the error of an object a pod needs that is not there, in
// the kubelet's words (configmap "name" not found).
type Missing struct{ Words string }

func (m Missing) Error() string { return m.Words }

// Of returns the pod to send for pod, its environment resolved, and the
// data it uses, read from src; node is the node it runs on, whose
// allocatable stands for a limit a container does not set (nil: none).
// pod is not changed. With a nil src, nothing is read: a pod that uses a
// ConfigMap or a Secret is refused with [ErrUnbound], and a projected
// volume's token, ConfigMaps and Secrets are left out. A read that fails
// fails Of: an object not found is a [Missing].
func Of(ctx context.Context, src Source, pod *corev1.Pod, node *corev1.Node) (*corev1.Pod, podapi.Data, error) {
	r := &reader{ctx: ctx, src: src, pod: pod, node: node, configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	if src == nil && usesObjects(pod) {
		return nil, podapi.Data{}, ErrUnbound
	}
	sent := pod.DeepCopy()
	data, err := r.volumes(sent)
	if err != nil {
		return nil, podapi.Data{}, err
	}
	for _, list := range [][]corev1.Container{sent.Spec.InitContainers, sent.Spec.Containers} {
		for i := range list {
			if err := r.env(&list[i]); err != nil {
				return nil, podapi.Data{}, fmt.Errorf("container %s: %w", list[i].Name, err)
			}
		}
	}
	return sent, data, nil
}

// reader reads the objects of one pod, each once.
type reader struct {
	ctx        context.Context
	src        Source
	pod        *corev1.Pod
	node       *corev1.Node
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

// configMap returns the ConfigMap name of the pod's namespace; nil, and
// no error, if it is missing and optional.
func (r *reader) configMap(name string, optional *bool) (*corev1.ConfigMap, error) {
	return lookup(r.configMaps, name, optional, "configmap", func() (*corev1.ConfigMap, error) {
		return r.src.ConfigMap(r.ctx, r.pod.Namespace, name)
	})
}

// secret is [reader.configMap] for a Secret.
func (r *reader) secret(name string, optional *bool) (*corev1.Secret, error) {
	return lookup(r.secrets, name, optional, "secret", func() (*corev1.Secret, error) {
		return r.src.Secret(r.ctx, r.pod.Namespace, name)
	})
}

// lookup returns the object name of kind, read once and kept in seen: a
// [Missing] if it is not found, nil if it is optional.
func lookup[T any](seen map[string]*T, name string, optional *bool, kind string, read func() (*T, error)) (*T, error) {
	obj, ok := seen[name]
	if !ok {
		var err error
		if obj, err = read(); apierrors.IsNotFound(err) {
			obj, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		seen[name] = obj
	}
	if obj == nil && !isTrue(optional) {
		return nil, Missing{Words: fmt.Sprintf("%s %q not found", kind, name)}
	}
	return obj, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// usesObjects reports whether pod uses a ConfigMap or a Secret of its
// namespace: a volume of one, or an environment variable from one.
func usesObjects(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil || v.Secret != nil {
			return true
		}
	}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			for _, e := range c.EnvFrom {
				if e.ConfigMapRef != nil || e.SecretRef != nil {
					return true
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil && (e.ValueFrom.ConfigMapKeyRef != nil || e.ValueFrom.SecretKeyRef != nil) {
					return true
				}
			}
		}
	}
	return false
}
