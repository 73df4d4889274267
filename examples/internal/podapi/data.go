package podapi

import corev1 "k8s.io/api/core/v1"

// Data is what a pod uses from the cluster, read by the caller, as
// interLink's Virtual Kubelet sends it with a create (its
// remoteExecutionHandleVolumes): each ConfigMap and each Secret a volume
// of the pod names, whole, and a ConfigMap for each projected volume,
// named as the volume, with a key for each file of it (the caller sends
// a downward API volume as a projected one, for interLink's API passes
// on no other kind).
type Data struct {
	ConfigMaps          []corev1.ConfigMap
	Secrets             []corev1.Secret
	ProjectedVolumeMaps []corev1.ConfigMap
}

// Request returns the request that creates pod with d: the pod, d, and
// the "container" list that [Containers] builds of them, as interLink's
// API sends it to a sidecar; a volume d has no object of is left out of
// its entry (a sidecar refuses a ConfigMap or Secret it does not find,
// and mounts a projected volume it does not find empty).
func (d Data) Request(pod *corev1.Pod) CreateRequest {
	req := CreateRequest{Pod: *pod, ConfigMaps: d.ConfigMaps, Secrets: d.Secrets, ProjectedVolumeMaps: d.ProjectedVolumeMaps}
	req.Containers, _ = Containers(req)
	return req
}

// Containers returns the "container" list of req's pod as interLink's
// API builds it (pkg/interlink/api/func.go, getData and retrieveData): an
// entry for each init container, then each container, with, for each of
// its volume mounts in order, what the pod's volume of that name holds
// in req's top-level lists:
//
//   - a configMap volume: the ConfigMap of its name;
//   - a projected volume: the ProjectedVolumeMap named as the volume;
//   - a secret volume: the Secret of its secretName;
//   - an emptyDir: nothing (emptyDirs stays null);
//   - any other kind, downwardAPI among them, or a mount of no volume:
//     nothing.
//
// The first of the matching name is taken, and a volume mounted twice is
// added twice. A ConfigMap, map or Secret not in req is left out of the
// entry and said in missing.
func Containers(req CreateRequest) (containers []RetrievedContainer, missing []string) {
	spec := req.Pod.Spec
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range list {
			entry := RetrievedContainer{Name: c.Name}
			for _, m := range c.VolumeMounts {
				missing = append(missing, retrieveMount(req, &entry, m)...)
			}
			containers = append(containers, entry)
		}
	}
	return containers, missing
}

// retrieveMount adds to entry what req holds for the volumes named as
// the mount m (a valid pod has one), stopping at the first found; it
// returns what it did not find.
func retrieveMount(req CreateRequest, entry *RetrievedContainer, m corev1.VolumeMount) (missing []string) {
	for _, v := range req.Pod.Spec.Volumes {
		if v.Name != m.Name {
			continue
		}
		switch {
		case v.ConfigMap != nil:
			if cm, ok := named(req.ConfigMaps, v.ConfigMap.Name); ok {
				entry.ConfigMaps = append(entry.ConfigMaps, cm)
				return missing
			}
			missing = append(missing, "container "+entry.Name+": no ConfigMap "+v.ConfigMap.Name+" for volume "+v.Name)
		case v.Projected != nil:
			if cm, ok := named(req.ProjectedVolumeMaps, v.Name); ok {
				entry.ProjectedVolumeMaps = append(entry.ProjectedVolumeMaps, cm)
				return missing
			}
			missing = append(missing, "container "+entry.Name+": no projected volume map "+v.Name)
		case v.Secret != nil:
			for _, s := range req.Secrets {
				if s.Name == v.Secret.SecretName {
					entry.Secrets = append(entry.Secrets, s)
					return missing
				}
			}
			missing = append(missing, "container "+entry.Name+": no Secret "+v.Secret.SecretName+" for volume "+v.Name)
		}
	}
	return missing
}

// named returns the first of maps named name.
func named(maps []corev1.ConfigMap, name string) (corev1.ConfigMap, bool) {
	for _, cm := range maps {
		if cm.Name == name {
			return cm, true
		}
	}
	return corev1.ConfigMap{}, false
}
