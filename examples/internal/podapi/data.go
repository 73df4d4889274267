package podapi

import corev1 "k8s.io/api/core/v1"

// Data is what a pod uses from the cluster, read by the caller, as
// interLink's Virtual Kubelet sends it with a create (its
// remoteExecutionHandleVolumes): each ConfigMap and each Secret a volume
// of the pod names, whole, and a ConfigMap for each projected (or
// downward API) volume, named as the volume, with a key for each file
// of it.
type Data struct {
	ConfigMaps          []corev1.ConfigMap
	Secrets             []corev1.Secret
	ProjectedVolumeMaps []corev1.ConfigMap
}

// Request returns the request that creates pod with d: the pod, d, and
// an entry for each init container and container, in that order, with
// the objects of d each mounts, as interLink's API builds them for a
// sidecar (its retrieveData): for each volume mount, the object of its
// volume, a ConfigMap and a Secret by their names, a projected volume's
// map by the volume's name; a volume d has no object of is left out of
// the entry (a sidecar refuses a ConfigMap or Secret it does not find,
// and mounts a projected volume it does not find empty).
func (d Data) Request(pod *corev1.Pod) CreateRequest {
	req := CreateRequest{Pod: *pod, ConfigMaps: d.ConfigMaps, Secrets: d.Secrets, ProjectedVolumeMaps: d.ProjectedVolumeMaps}
	volumes := make(map[string]corev1.Volume, len(pod.Spec.Volumes))
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			entry := RetrievedContainer{Name: c.Name}
			for _, m := range c.VolumeMounts {
				d.mounted(&entry, volumes[m.Name])
			}
			req.Containers = append(req.Containers, entry)
		}
	}
	return req
}

// mounted adds to entry the object of d that v, a volume its container
// mounts, names; none when d has none.
func (d Data) mounted(entry *RetrievedContainer, v corev1.Volume) {
	switch {
	case v.ConfigMap != nil:
		if c, ok := named(d.ConfigMaps, v.ConfigMap.Name); ok {
			entry.ConfigMaps = append(entry.ConfigMaps, c)
		}
	case v.Secret != nil:
		for _, s := range d.Secrets {
			if s.Name == v.Secret.SecretName {
				entry.Secrets = append(entry.Secrets, s)
				return
			}
		}
	case v.Projected != nil || v.DownwardAPI != nil:
		if c, ok := named(d.ProjectedVolumeMaps, v.Name); ok {
			entry.ProjectedVolumeMaps = append(entry.ProjectedVolumeMaps, c)
		}
	}
}

// named returns the ConfigMap of maps named name.
func named(maps []corev1.ConfigMap, name string) (corev1.ConfigMap, bool) {
	for _, c := range maps {
		if c.Name == name {
			return c, true
		}
	}
	return corev1.ConfigMap{}, false
}
