package jobs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/poddata"
)

// dataSetup is a keeper whose pods' data is the fake client's objects,
// with a recorder of its events from each node.
type dataSetup struct {
	*setup
	as        []string // the node each source was asked for
	recorders map[string]*record.FakeRecorder
}

func newDataSetup(confirming bool) *dataSetup {
	d := &dataSetup{setup: newSetup(1), recorders: map[string]*record.FakeRecorder{}}
	if !confirming {
		d.plainKeeper()
	}
	cfg := d.keeper.cfg
	cfg.Data = func(node string) (poddata.Source, error) {
		d.as = append(d.as, node)
		return poddata.ClientSource{Client: d.client}, nil
	}
	cfg.Events = func(node string) record.EventRecorder {
		if d.recorders[node] == nil {
			d.recorders[node] = record.NewFakeRecorder(100)
		}
		return d.recorders[node]
	}
	d.keeper = New(cfg)
	return d
}

// events returns the events recorded since the last call, each "node:
// type reason message".
func (d *dataSetup) events() []string {
	var out []string
	for node, r := range d.recorders {
		for len(r.Events) > 0 {
			out = append(out, node+": "+<-r.Events)
		}
	}
	return out
}

// configured is a pod of hpc named name that mounts the ConfigMap
// settings and reads its key mode into MODE.
func configured(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{
			NodeName: node,
			Volumes:  []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}},
			Containers: []corev1.Container{{
				Name:         "job",
				VolumeMounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/conf"}},
				Env:          []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode"}}}},
			}},
		},
	}
}

var settings = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "settings"}, Data: map[string]string{"mode": "fast"}}

// TestBoundPodSentItsData: a bound pod's create carries the ConfigMap it
// mounts, read as its node, in its container's entry too, and its
// environment resolved.
func TestBoundPodSentItsData(t *testing.T) {
	d := newDataSetup(false)
	d.plugin.state = "queued"
	pod := configured("conf", "vk-0")
	_ = d.client.Tracker().Add(pod)
	_ = d.client.Tracker().Add(settings)
	d.bound = map[string][]*corev1.Pod{"vk-0": {pod}}
	d.keeper.Step(t.Context())
	if len(d.plugin.created) != 1 {
		t.Fatalf("creates %v, want one", d.plugin.took())
	}
	req := d.plugin.created[0]
	if len(req.ConfigMaps) != 1 || req.ConfigMaps[0].Data["mode"] != "fast" || len(req.Containers) != 1 || len(req.Containers[0].ConfigMaps) != 1 {
		t.Errorf("the create's ConfigMaps %v, its container's entry %+v; want settings in both", req.ConfigMaps, req.Containers)
	}
	if diff := cmp.Diff([]corev1.EnvVar{{Name: "MODE", Value: "fast"}}, req.Pod.Spec.Containers[0].Env); diff != "" {
		t.Errorf("the environment sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"vk-0"}, d.as); diff != "" {
		t.Errorf("read as (-want +got):\n%s", diff)
	}
}

// TestMissingDataTold: a bound pod whose ConfigMap is missing gets no
// job and is told so once, in the kubelet's words, from its node; once
// the ConfigMap is there, its job is made.
func TestMissingDataTold(t *testing.T) {
	d := newDataSetup(false)
	d.plugin.state = "queued"
	pod := configured("conf", "vk-0")
	_ = d.client.Tracker().Add(pod)
	d.bound = map[string][]*corev1.Pod{"vk-0": {pod}}
	d.keeper.Step(t.Context())
	d.keeper.Step(t.Context())
	if len(d.plugin.created) != 0 {
		t.Fatalf("creates %v without its ConfigMap, want none", d.plugin.took())
	}
	want := []string{`vk-0: Warning DataUnavailable its job is not made: volume conf: configmap "settings" not found`}
	if diff := cmp.Diff(want, d.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	_ = d.client.Tracker().Add(settings)
	d.keeper.Step(t.Context())
	if len(d.plugin.created) != 1 {
		t.Errorf("creates %v once the ConfigMap is there, want one", d.plugin.took())
	}
}

// TestWaitingPodDataUnbound: a pod that waits for confirmation and uses
// a ConfigMap gets no job before it binds, is told why from the node of
// its allocation, and nothing is read; a waiting pod that uses none is
// sent its environment resolved from itself.
func TestWaitingPodDataUnbound(t *testing.T) {
	d := newDataSetup(true)
	d.plugin.state = "queued"
	d.wait("conf")
	p, _ := d.keeper.cfg.Waiting.Pods("hpc").Get("conf")
	withConf := configured("conf", "")
	p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts, p.Spec.Containers[0].Env = withConf.Spec.Volumes, withConf.Spec.Containers[0].VolumeMounts, withConf.Spec.Containers[0].Env
	d.wait("plain")
	q, _ := d.keeper.cfg.Waiting.Pods("hpc").Get("plain")
	q.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	d.keeper.Step(t.Context())
	d.keeper.Step(t.Context())
	if got := d.plugin.took(); !cmp.Equal(got, []string{"status of 2", "create plain@vk-0", "status of 2"}) {
		t.Errorf("calls %v, want a job of plain alone", got)
	}
	if len(d.plugin.created) == 1 {
		if env := d.plugin.created[0].Pod.Spec.Containers[0].Env; len(env) != 1 || env[0].Value != "vk-0" {
			t.Errorf("plain's environment sent %v, want NODE=vk-0", env)
		}
	}
	events := d.events()
	if len(events) != 1 || !strings.HasPrefix(events[0], "vk-0: Warning DataUnavailable its job is not made: the pod uses a ConfigMap or a Secret") {
		t.Errorf("events %q, want one DataUnavailable from vk-0", events)
	}
	if len(d.as) != 0 {
		t.Errorf("data read as %v for pods not bound, want none", d.as)
	}
}
