package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
)

// TestThroughInterLinkAPI: the provider as interLink is deployed, with
// interLink's API server (its double, examples/interlinkapi) between it
// and the sample plugin as interLink's Slurm plugin (-slurm): the ping at
// /pinglink, the pods at /create, /status and /delete beside it, every
// answer through the API's cache and relay. The plugin has two machines,
// the second stuck (it never starts a job), so that a job pinned there
// stays queued. Two providers: one with -confirm, one with every setting
// at its default. Short jobs run once each and Succeed, a pod that asks
// for confirmation among them; a pod that mounts a ConfigMap and a Secret
// runs and its job holds their data; a pod whose job queues, deleted, is
// gone, its job cancelled. Nothing is lost: one job per pod, no delete of
// a pod the plugin did not know.
func TestThroughInterLinkAPI(t *testing.T) {
	needsControlPlane(t)
	dir := t.TempDir()
	plugin, api := interLinkStack(t, "-slurm-data", dir, "-parts-generate", "2", "-parts-stuck", "cn002")
	pluginToo, apiToo := interLinkStack(t)
	confirming := configOfArgs(t, "-confirm", "-plugin", apiToo+"/pinglink", "-node", "vk-interlink-confirm")
	plain := configOfArgs(t, "-plugin", api+"/pinglink", "-node", "vk-interlink")
	onConfirming, onPlain := confirming.Static.Name, plain.Static.Name
	ctx := t.Context()

	conf := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "interlink-conf", Namespace: metav1.NamespaceDefault}, Data: map[string]string{"mode": "fast"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "interlink-secret", Namespace: metav1.NamespaceDefault}, StringData: map[string]string{"password": "s3cret"}}
	if _, err := client.CoreV1().ConfigMaps(conf.Namespace).Create(ctx, conf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().ConfigMaps(conf.Namespace).Delete(context.Background(), conf.Name, metav1.DeleteOptions{})
		_ = client.CoreV1().Secrets(secret.Namespace).Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
	})

	const asks, short, shortToo, data, queued = "il-asks", "il-short", "il-short-confirming", "il-data", "il-queued"
	forgetConfirmation(t, []string{onConfirming}, []string{asks})
	runConfig(t, confirming)
	runConfig(t, plain)
	confirmingReady(t, onConfirming)

	p := askingPod(asks, "", "1")
	p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": onConfirming}
	p.Spec.Containers[0].Command = []string{"sleep", "1"}
	createTestPod(t, p)
	createTestPod(t, slurmPod(shortToo, onConfirming, "1", ""))
	createTestPod(t, slurmPod(short, onPlain, "1", ""))
	createTestPod(t, dataPod(data, onPlain, conf.Name, secret.Name))
	waiting := slurmPod(queued, onPlain, "600", "-w cn002")
	grace := longGrace // Terminating until its node says it stopped
	waiting.Spec.TerminationGracePeriodSeconds = &grace
	createTestPod(t, waiting)

	within(t, 3*time.Minute, "the short pods Succeeded and the data pod runs", func(context.Context) (bool, string) {
		var not []string
		for n, want := range map[string]corev1.PodPhase{asks: corev1.PodSucceeded, shortToo: corev1.PodSucceeded, short: corev1.PodSucceeded, data: corev1.PodRunning} {
			if phase := storedPod(t, n).Status.Phase; phase != want {
				not = append(not, n+" "+string(phase))
			}
		}
		return len(not) == 0, strings.Join(not, ", ")
	})
	folder := filepath.Join(dir, metav1.NamespaceDefault+"-"+string(storedPod(t, data).UID))
	for file, want := range map[string]string{"configMaps/conf/mode": "fast", "secrets/secret/password": "s3cret"} {
		if got, err := os.ReadFile(filepath.Join(folder, file)); err != nil || string(got) != want {
			t.Errorf("the job's file %s: %q (%v), want %q", file, got, err, want)
		}
	}

	uid := string(storedPod(t, queued).UID)
	within(t, time.Minute, queued+"'s job queued", func(ctx context.Context) (bool, string) {
		j, ok := latestJobs(ctx, t, plugin)[uid]
		return ok && j.State == partsfleet.Queued, j.State.String()
	})
	deleteUID := deleteGracefully(t, queued)
	if ok, why := terminating(ctx, queued); !ok {
		t.Fatalf("%s once deleted: %s, want Terminating until its job is gone", queued, why)
	}
	within(t, time.Minute, queued+" gone once deleted", func(ctx context.Context) (bool, string) {
		return gone(ctx, queued, deleteUID)
	})
	if j := latestJobs(ctx, t, plugin)[uid]; j.State != partsfleet.Cancelled {
		t.Errorf("%s's job is %v once its pod is gone, want cancelled", queued, j.State)
	}

	for url, pods := range map[string][]string{plugin: {short, data}, pluginToo: {asks, shortToo}} {
		made := jobsOf(ctx, t, url, pods...)
		for _, n := range pods {
			if made[n] != 1 {
				t.Errorf("%s: %d jobs on the backend, want 1", n, made[n])
			}
		}
		if acct := accounting(ctx, t, url); acct.UnknownDeletes != 0 {
			t.Errorf("%d deletes of a pod the backend did not know, want none", acct.UnknownDeletes)
		}
	}
	if n := jobsByUID(ctx, t, plugin)[uid]; n != 1 {
		t.Errorf("%s: %d jobs on the backend, want 1", queued, n)
	}
}

// interLinkStack runs the sample plugin as interLink's Slurm plugin
// (-slurm, and args) and the double of interLink's API in front of it,
// one plugin for one provider as interLink deploys them: the plugin's
// status cache serves its last answer whatever it is asked (10 s), and
// the API answers each pod from its own cache, so that a plugin shared
// by two providers gives each the other's pods, and its own as an API's
// cache last had them. It returns the plugin's status URL and the API's
// base URL.
func interLinkStack(t *testing.T, args ...string) (plugin, api string) {
	t.Helper()
	plugin = samplePlugin(t, append([]string{"-slurm"}, args...)...)
	api = serveExample(t, "interlinkapi", "serving interLink's API on ", "-sidecar", strings.TrimSuffix(plugin, "/status"))
	return plugin, api
}
