package main

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// mountOptions are how a create treats what the containers of its pod
// mount, beside the checks that every create makes ([prepareMounts]).
type mountOptions struct {
	// slurm is -slurm: a mount of a volume that the pod has not gets no
	// answer, as the Slurm plugin panics on it.
	slurm bool
	// data is -slurm-data, the folder under which the pod's files are
	// written ([podFiles]); empty, nothing is written.
	data string
}

// prepare checks and writes what req's pod mounts ([prepareMounts]) and
// returns the pod's files, open for the create to remove them if the pod
// is refused later, and the words of a refusal, "" for none; the pod's
// folder is then removed, as the Slurm plugin's SubmitHandler (at
// f8451d9) removes it on every error of its create. A mount of a volume
// that the pod has not, with -slurm, panics with http.ErrAbortHandler,
// on which net/http closes the connection without an answer, as it does
// when the Slurm plugin panics on it; the folder is kept then, as the
// plugin leaves it.
func (o mountOptions) prepare(req podapi.CreateRequest) (podFiles, string) {
	files, err := openPodFiles(o.data, req.Pod)
	if err != nil {
		return files, err.Error()
	}
	err = prepareMounts(req, files)
	var noVolume *noVolumeError
	switch {
	case errors.As(err, &noVolume) && o.slurm:
		files.close()
		panic(http.ErrAbortHandler)
	case err != nil:
		_ = files.remove() // as the Slurm plugin's, whose error it does not look at
		return files, err.Error()
	}
	return files, ""
}

// noVolumeError is a mount of a volume that the pod has not, in the
// words of the Slurm plugin's getPodVolume.
type noVolumeError struct{ volume, pod string }

func (e *noVolumeError) Error() string {
	return "could not find volume " + e.volume + " in pod " + e.pod
}

// prepareMounts checks what the containers of req's pod mount, and has
// files write it, as interLink's Slurm plugin does when it makes a pod's
// job (pkg/slurm/prepare.go at f8451d9, prepareMounts, which its
// SubmitHandler calls for each container, init containers first, and
// prepareEnvs after it). It returns the first refusal, for each
// container in order and each of its mounts in order:
//
//   - a mount of a volume that the pod has not: a *noVolumeError (the
//     plugin dereferences the volume that getPodVolume did not find, and
//     panics);
//   - a mount of a container without an entry of its name in
//     req.Containers: "could not find retrieved container for C in pod
//     P" (getRetrievedContainer);
//   - a ConfigMap volume whose ConfigMap, by name, is not in the
//     container's entry, optional or not, for the plugin looks at no
//     Optional: "could not find configMap NAME in container C in pod P"
//     (getRetrievedConfigMap); and a Secret volume likewise, "could not
//     find secret NAME in container C in pod P" (getRetrievedSecret);
//   - the error of a file that files could not write.
//
// A projected volume without a map of its name in the entry is
// tolerated: getRetrievedProjectedVolumeMap returns nil, nil, and the
// plugin warns and mounts nothing. An emptyDir needs no data. A hostPath
// volume, which the plugin checks on its own host, is not checked. A
// volume of any other type, downwardAPI or persistentVolumeClaim among
// them, ends the container's mounts: the plugin ignores it and returns,
// so that the container's later mounts are neither checked nor written.
// A volume that no container mounts is not looked at.
func prepareMounts(req podapi.CreateRequest, files podFiles) error {
	for _, list := range [][]corev1.Container{req.Pod.Spec.InitContainers, req.Pod.Spec.Containers} {
		for _, c := range list {
			if err := files.makeFolder(); err != nil {
				return err
			}
			if err := mountContainer(req, c, files); err != nil {
				return err
			}
			files.writeEnvFile(c)
		}
	}
	return nil
}

// mountContainer checks and writes the mounts of c, a container of req's
// pod, for [prepareMounts].
func mountContainer(req podapi.CreateRequest, c corev1.Container, files podFiles) error {
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(req.Pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			return &noVolumeError{volume: m.Name, pod: req.Pod.Name}
		}
		j := slices.IndexFunc(req.Containers, func(r podapi.RetrievedContainer) bool { return r.Name == c.Name })
		if j < 0 {
			return fmt.Errorf("could not find retrieved container for %s in pod %s", c.Name, req.Pod.Name)
		}
		done, err := mountVolume(req.Containers[j], req.Pod.Name, m, req.Pod.Spec.Volumes[i], files)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// mountVolume checks and writes m, a mount of v by the container of
// entry in the pod named pod, for [mountContainer]; done reports that
// the Slurm plugin goes no further with the container's mounts.
func mountVolume(entry podapi.RetrievedContainer, pod string, m corev1.VolumeMount, v corev1.Volume, files podFiles) (done bool, err error) {
	switch {
	case v.ConfigMap != nil:
		cm, ok := namedConfigMap(entry.ConfigMaps, v.ConfigMap.Name)
		if !ok {
			return false, fmt.Errorf("could not find configMap %s in container %s in pod %s", v.ConfigMap.Name, entry.Name, pod)
		}
		return false, files.writeVolume("configMaps", m.Name, configMapFiles(cm), fileMode(v.ConfigMap.DefaultMode))
	case v.Projected != nil:
		cm, ok := namedConfigMap(entry.ProjectedVolumeMaps, v.Name)
		if !ok {
			return false, nil
		}
		return false, files.writeVolume("projectedVolumeMaps", m.Name, configMapFiles(cm), fileMode(v.Projected.DefaultMode))
	case v.Secret != nil:
		i := slices.IndexFunc(entry.Secrets, func(s corev1.Secret) bool { return s.Name == v.Secret.SecretName })
		if i < 0 {
			return false, fmt.Errorf("could not find secret %s in container %s in pod %s", v.Secret.SecretName, entry.Name, pod)
		}
		return false, files.writeVolume("secrets", m.Name, entry.Secrets[i].Data, fileMode(v.Secret.DefaultMode))
	case v.EmptyDir != nil:
		return false, files.makeEmptyDir(v.Name)
	case v.HostPath != nil:
		return false, nil
	}
	return true, nil
}

// namedConfigMap returns the ConfigMap of maps named name.
func namedConfigMap(maps []corev1.ConfigMap, name string) (corev1.ConfigMap, bool) {
	i := slices.IndexFunc(maps, func(c corev1.ConfigMap) bool { return c.Name == name })
	if i < 0 {
		return corev1.ConfigMap{}, false
	}
	return maps[i], true
}
