package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// umask is the mask of the modes of the files this process creates: the
// Slurm plugin's modes are asked of the system, which takes it off.
func umask(t *testing.T) fs.FileMode {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(probe, nil, 0o777); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(probe)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ info.Mode().Perm()
}

// tree is what is under dir: for each folder "dir", for each file its
// mode and its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			got[rel] = "dir"
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		content, err := os.ReadFile(path)
		got[rel] = fmt.Sprintf("%#o %s", info.Mode().Perm(), content)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// dataRequest is the create of pod-d1 in team-a: an init container that
// mounts an emptyDir, with one env var; main, which mounts a ConfigMap,
// a Secret, a projected volume, a downwardAPI volume and, after it, a
// ConfigMap that the Slurm plugin does not reach, with env vars to
// quote; and side, which mounts nothing and has no env.
func dataRequest() podapi.CreateRequest {
	volumes := []corev1.Volume{
		configMapVolume("conf", "app", false, modeOf(0o600)), secretVolume("creds", "token", false, modeOf(0o400)),
		projectedVolume, downwardVolume, configMapVolume("late", "late", false, nil), scratchVolume,
	}
	first := mountsOf("init", "scratch")
	first.Env = []corev1.EnvVar{{Name: "X", Value: "1"}}
	mainC := mountsOf("main", "conf", "creds", "kube-api-access-x", "podinfo", "late")
	mainC.Env = []corev1.EnvVar{
		{Name: "PLAIN", Value: "abc"}, {Name: "EMPTY"}, {Name: "SPACE", Value: "a b"}, {Name: "QUOTE", Value: "it's"},
		{Name: "FROM", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	app := corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Data:       map[string]string{"app.conf": `a\nb`, "raw": "c\\nd\ne"},
		BinaryData: map[string][]byte{"blob": {0, 1}},
	}
	entry := podapi.RetrievedContainer{
		Name:       "main",
		ConfigMaps: []corev1.ConfigMap{app, {ObjectMeta: metav1.ObjectMeta{Name: "late"}, Data: map[string]string{"x": "y"}}},
		Secrets:    []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "token"}, Data: map[string][]byte{"token": []byte("s3cret")}, StringData: map[string]string{"other": "z"}}},
		ProjectedVolumeMaps: []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "kube-api-access-x"}, Data: map[string]string{
			"token": "jwt", "ca.crt": `-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----`,
		}}},
	}
	return mountRequest("d1", volumes, []corev1.Container{first}, []corev1.Container{mainC, {Name: "side"}},
		podapi.RetrievedContainer{Name: "init"}, entry, podapi.RetrievedContainer{Name: "side"})
}

// TestSlurmDataWritten: with -slurm-data, a create writes the pod's
// folder as the Slurm plugin writes it under its DataRootFolder: each key
// of the Data of each ConfigMap, Secret and projected map mounted, in
// configMaps, secrets and projectedVolumeMaps, in the volume's
// defaultMode (0644 without one), a ConfigMap's \n unescaped in a value
// without a newline; a folder for the emptyDir; an envfile for each
// container with env vars, each value quoted, ValueFrom written as its
// empty Value. A ConfigMap's BinaryData, a Secret's StringData and what
// a container mounts after a downwardAPI volume are not written.
func TestSlurmDataWritten(t *testing.T) {
	dir := t.TempDir()
	server, _, _ := serve(t, t0, "-slurm", "-slurm-data", dir)
	if code, body := call(t, server, http.MethodPost, podapi.CreatePath, dataRequest()); code != http.StatusOK {
		t.Fatalf("create: %d %s", code, body)
	}
	mask := umask(t)
	file := func(mode fs.FileMode, content string) string { return fmt.Sprintf("%#o %s", mode&^mask, content) }
	want := map[string]string{
		"team-a-d1":                                              "dir",
		"team-a-d1/emptyDirs":                                    "dir",
		"team-a-d1/emptyDirs/scratch":                            "dir",
		"team-a-d1/init_envfile.properties":                      file(0o666, "X=1\n"),
		"team-a-d1/configMaps":                                   "dir",
		"team-a-d1/configMaps/conf":                              "dir",
		"team-a-d1/configMaps/conf/app.conf":                     file(0o600, "a\nb"),
		"team-a-d1/configMaps/conf/raw":                          file(0o600, "c\\nd\ne"),
		"team-a-d1/secrets":                                      "dir",
		"team-a-d1/secrets/creds":                                "dir",
		"team-a-d1/secrets/creds/token":                          file(0o400, "s3cret"),
		"team-a-d1/projectedVolumeMaps":                          "dir",
		"team-a-d1/projectedVolumeMaps/kube-api-access-x":        "dir",
		"team-a-d1/projectedVolumeMaps/kube-api-access-x/token":  file(0o644, "jwt"),
		"team-a-d1/projectedVolumeMaps/kube-api-access-x/ca.crt": file(0o644, "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----"),
		"team-a-d1/main_envfile.properties":                      file(0o666, "PLAIN=abc\nEMPTY=''\nSPACE='a b'\nQUOTE='it'\"'\"'s'\nFROM=''\n"),
	}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("-slurm-data (-want +got):\n%s", diff)
	}
}

// TestSlurmDataRemoved: the pod's folder is removed, all of it, by a
// create refused after the folder was written, by a later container's
// mount (the files of the pod's earlier job with it), by sbatch, or by a
// file that cannot be written, a key that leads out of -slurm-data,
// which nothing is written out of; and by a delete that cancels the
// pod's job. A delete whose scancel fails keeps it.
func TestSlurmDataRemoved(t *testing.T) {
	refusedMount := dataRequest()
	refusedMount.Pod.Spec.Containers[1] = mountsOf("side", "conf")
	sbatchRefused := dataRequest()
	sbatchRefused.Pod.Annotations = map[string]string{podapi.SlurmFlags: "--time=soon"}
	escaping := dataRequest()
	escaping.Containers[1].Secrets[0].Data["../../../../escape"] = []byte("x")
	tests := []struct {
		name  string
		req   podapi.CreateRequest
		words string // in the 504
	}{
		{"a later container's mount", refusedMount, "could not find configMap app in container side in pod pod-d1"},
		{"sbatch", sbatchRefused, "sbatch: error: Invalid --time specification"},
		{"a key out of the folder", escaping, "escapes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "jobs")
			server, _, _ := serve(t, t0, "-slurm", "-slurm-data", dir)
			if code, body := call(t, server, http.MethodPost, podapi.CreatePath, dataRequest()); code != http.StatusOK { // the files of the pod's first job
				t.Fatalf("first create: %d %s", code, body)
			}
			if code, body := call(t, server, http.MethodPost, podapi.CreatePath, tt.req); code != http.StatusGatewayTimeout || !strings.Contains(string(body), tt.words) {
				t.Errorf("create: %d %s; want 504 with %q", code, body, tt.words)
			}
			if got := tree(t, parent); !cmp.Equal(got, map[string]string{"jobs": "dir"}) {
				t.Errorf("after the refused create: %v; want -slurm-data empty", got)
			}
		})
	}
	t.Run("delete", func(t *testing.T) {
		dir := t.TempDir()
		server, _, _ := serve(t, t0, "-slurm", "-slurm-data", dir, "-scancel-failures", "1")
		req := dataRequest()
		if code, body := call(t, server, http.MethodPost, podapi.CreatePath, req); code != http.StatusOK {
			t.Fatalf("create: %d %s", code, body)
		}
		if code, _ := call(t, server, http.MethodPost, podapi.DeletePath, req.Pod); code != http.StatusInternalServerError || len(tree(t, dir)) == 0 {
			t.Errorf("a delete whose scancel fails: %d, %d entries left; want 500 and the folder kept", code, len(tree(t, dir)))
		}
		if code, body := call(t, server, http.MethodPost, podapi.DeletePath, req.Pod); code != http.StatusOK {
			t.Fatalf("delete: %d %s", code, body)
		}
		if got := tree(t, dir); len(got) != 0 {
			t.Errorf("after the delete: %v; want -slurm-data empty", got)
		}
	})
}

// TestShellQuote: values are quoted as shellescape.Quote quotes them,
// and a POSIX shell reads each back as it was.
func TestShellQuote(t *testing.T) {
	tests := []struct{ value, want string }{
		{"", "''"},
		{"abc", "abc"},
		{"A-Z_a.z/0:9,x=y+z%w@v", "A-Z_a.z/0:9,x=y+z%w@v"},
		{"a b", "'a b'"},
		{"it's", `'it'"'"'s'`},
		{"'", `''"'"''`},
		{"$HOME", "'$HOME'"},
		{`a"b\c`, `'a"b\c'`},
		{"two\nlines", "'two\nlines'"},
		{"é", "'é'"},
		{"*", "'*'"},
	}
	sh, err := exec.LookPath("sh")
	for _, tt := range tests {
		got := shellQuote(tt.value)
		if got != tt.want {
			t.Errorf("shellQuote(%q) = %q, want %q", tt.value, got, tt.want)
		}
		if err != nil {
			continue // no shell to read it back
		}
		out, err := exec.Command(sh, "-c", "printf %s "+got).Output()
		if err != nil || string(out) != tt.value {
			t.Errorf("sh reads %s as %q (%v), want %q", got, out, err, tt.value)
		}
	}
}

// TestUnescapeNewlines: a ConfigMap's value has each \n made a newline
// when it has no newline, as the Slurm plugin's
// normalizeVolumeFileContent does, and is kept as it is otherwise.
func TestUnescapeNewlines(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{`a\nb\n`, "a\nb\n"},
		{"a\\nb\nc", "a\\nb\nc"},
		{"plain", "plain"},
		{`a\tb`, `a\tb`},
		{"", ""},
	} {
		if got := string(unescapeNewlines(tt.value)); got != tt.want {
			t.Errorf("unescapeNewlines(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
}
