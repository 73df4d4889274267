package poddata

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// defaultTokenSeconds is a projected token's expiry when its source sets
// none, as the API server defaults it (an hour).
const defaultTokenSeconds = 3600

// volumes returns the data of sent's volumes, and sends each downward
// API volume as a projected one.
func (r *reader) volumes(sent *corev1.Pod) (podapi.Data, error) {
	var data podapi.Data
	for i := range sent.Spec.Volumes {
		v := &sent.Spec.Volumes[i]
		switch {
		case v.ConfigMap != nil:
			c, err := r.configMap(v.ConfigMap.Name, v.ConfigMap.Optional)
			if err != nil {
				return data, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			if c != nil {
				data.ConfigMaps = append(data.ConfigMaps, *c)
			}
		case v.Secret != nil:
			s, err := r.secret(v.Secret.SecretName, v.Secret.Optional)
			if err != nil {
				return data, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			if s != nil {
				data.Secrets = append(data.Secrets, *s)
			}
		case v.Projected != nil:
			m, err := r.projected(v.Name, v.Projected.Sources)
			if err != nil {
				return data, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			data.ProjectedVolumeMaps = append(data.ProjectedVolumeMaps, m)
		case v.DownwardAPI != nil:
			m := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v.Name}, Data: map[string]string{}}
			if err := r.downward(m.Data, v.DownwardAPI.Items); err != nil {
				return data, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			data.ProjectedVolumeMaps = append(data.ProjectedVolumeMaps, m)
			v.VolumeSource = corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: v.DownwardAPI.DefaultMode,
				Sources:     []corev1.VolumeProjection{{DownwardAPI: &corev1.DownwardAPIProjection{Items: v.DownwardAPI.Items}}},
			}}
		}
	}
	return data, nil
}

// projected returns the map of the projected volume name, a key for each
// of its files. Without a Source, only the downward API's.
func (r *reader) projected(name string, sources []corev1.VolumeProjection) (corev1.ConfigMap, error) {
	m := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{}}
	for _, s := range sources {
		var err error
		switch {
		case s.DownwardAPI != nil:
			err = r.downward(m.Data, s.DownwardAPI.Items)
		case r.src == nil:
		case s.ServiceAccountToken != nil:
			err = r.token(m.Data, s.ServiceAccountToken)
		case s.ConfigMap != nil:
			var c *corev1.ConfigMap
			if c, err = r.configMap(s.ConfigMap.Name, s.ConfigMap.Optional); err == nil && c != nil {
				err = project(m.Data, c.Data, s.ConfigMap.Items, "ConfigMap "+c.Name)
			}
		case s.Secret != nil:
			var sec *corev1.Secret
			if sec, err = r.secret(s.Secret.Name, s.Secret.Optional); err == nil && sec != nil {
				err = project(m.Data, asStrings(sec.Data), s.Secret.Items, "Secret "+sec.Name)
			}
		}
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

// project puts the keys of values in files: all of them at their own
// names, or the items at their paths.
func project(files, values map[string]string, items []corev1.KeyToPath, of string) error {
	if len(items) == 0 {
		for k, v := range values {
			files[k] = v
		}
		return nil
	}
	for _, it := range items {
		v, ok := values[it.Key]
		if !ok {
			return Missing{Words: fmt.Sprintf("couldn't find key %s in %s", it.Key, of)}
		}
		files[it.Path] = v
	}
	return nil
}

// token puts in files, at the source's path, a token of the pod's
// ServiceAccount bound to the pod, as a kubelet asks for one.
func (r *reader) token(files map[string]string, s *corev1.ServiceAccountTokenProjection) error {
	seconds := int64(defaultTokenSeconds)
	if s.ExpirationSeconds != nil {
		seconds = *s.ExpirationSeconds
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: r.pod.Name, UID: r.pod.UID},
	}}
	if s.Audience != "" {
		req.Spec.Audiences = []string{s.Audience}
	}
	account := r.pod.Spec.ServiceAccountName
	if account == "" {
		account = "default"
	}
	got, err := r.src.Token(r.ctx, r.pod.Namespace, account, req)
	if err != nil {
		return fmt.Errorf("the token of ServiceAccount %s: %w", account, err)
	}
	files[s.Path] = got.Status.Token
	return nil
}

// downward puts in files the downward API's items.
func (r *reader) downward(files map[string]string, items []corev1.DownwardAPIVolumeFile) error {
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = field(r.pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = r.resource(it.ResourceFieldRef, "")
		}
		if err != nil {
			return err
		}
		files[it.Path] = v
	}
	return nil
}

// asStrings returns data's values as strings.
func asStrings(data map[string][]byte) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}
