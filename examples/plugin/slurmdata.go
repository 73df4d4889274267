package main

import (
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podFiles writes, under -slurm-data, the folder of one pod that
// interLink's Slurm plugin writes under its DataRootFolder for the
// pod's job to read (pkg/slurm at f8451d9, with ExportPodData and
// SHARED_FS=true, where the plugin writes the files itself before
// sbatch, rather than the job's script writing them on the machine): a
// file for each key of each ConfigMap, Secret and projected volume a
// container mounts, a folder for each emptyDir, and an envfile for each
// container with environment variables. The zero podFiles writes
// nothing. Every name is taken inside -slurm-data (an os.Root), so that
// a key or UID with ".." in it is an error rather than a file elsewhere.
type podFiles struct {
	root   *os.Root // -slurm-data; nil writes nothing
	folder string   // the pod's: <namespace>-<uid>, as SubmitHandler names it
}

// openPodFiles returns the files of pod under dir, which it makes if it
// has to, as the plugin's CreateDirectories does; none when dir is
// empty.
func openPodFiles(dir string, pod corev1.Pod) (podFiles, error) {
	if dir == "" {
		return podFiles{}, nil
	}
	if err := os.MkdirAll(dir, os.ModePerm); err != nil {
		return podFiles{}, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return podFiles{}, err
	}
	return podFiles{root: root, folder: pod.Namespace + "-" + string(pod.UID)}, nil
}

// close closes f's folder.
func (f podFiles) close() {
	if f.root != nil {
		_ = f.root.Close()
	}
}

// makeFolder makes the pod's folder, as prepareMounts makes it for each
// container, whatever it mounts.
func (f podFiles) makeFolder() error {
	if f.root == nil {
		return nil
	}
	return f.root.MkdirAll(f.folder, os.ModePerm)
}

// remove removes the pod's folder and all in it, as the Slurm plugin
// does when it refuses the pod's create, and when it deletes its job
// (deleteContainer).
func (f podFiles) remove() error {
	if f.root == nil {
		return nil
	}
	return f.root.RemoveAll(f.folder)
}

// writeVolume writes data, the files of a volume of volumeType
// (configMaps, secrets or projectedVolumeMaps, as mountData names them)
// mounted as mount, one file of mode for each key, in a folder of their
// own made anew, as mountDataSimpleVolume does with SHARED_FS=true.
func (f podFiles) writeVolume(volumeType, mount string, data map[string][]byte, mode os.FileMode) error {
	if f.root == nil {
		return nil
	}
	dir := filepath.Join(f.folder, volumeType, mount)
	if err := f.root.RemoveAll(dir); err != nil {
		return err
	}
	if err := f.root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for key, content := range data {
		if err := f.root.WriteFile(filepath.Join(dir, key), content, mode); err != nil {
			return err
		}
	}
	return nil
}

// makeEmptyDir makes the folder of the emptyDir volume named name, as
// mountData does: emptyDirs/<name>.
func (f podFiles) makeEmptyDir(name string) error {
	if f.root == nil {
		return nil
	}
	return f.root.MkdirAll(filepath.Join(f.folder, "emptyDirs", name), 0o755)
}

// writeEnvFile writes c's envfile, <container>_envfile.properties, when
// c has environment variables ([envFile]), as createEnvFile does. An
// error is not one of the create: prepareEnvs logs it and goes on
// without the file.
func (f podFiles) writeEnvFile(c corev1.Container) {
	if f.root == nil || len(c.Env) == 0 {
		return
	}
	_ = f.root.WriteFile(filepath.Join(f.folder, c.Name+"_envfile.properties"), envFile(c.Env), 0o666)
}

// envFile is the content of an envfile of env, as createEnvFile writes
// it: a line NAME=value for each variable, in order, its value quoted
// ([shellQuote]) for the container runtime reads the file as a shell
// would. It writes each variable's Value, and only that: a variable
// from a ConfigMap, a Secret or a field (ValueFrom) is written with its
// Value, empty unless the caller set it.
func envFile(env []corev1.EnvVar) []byte {
	var b strings.Builder
	for _, e := range env {
		b.WriteString(e.Name + "=" + shellQuote(e.Value) + "\n")
	}
	return []byte(b.String())
}

// shellQuote is s as one word of a POSIX shell, quoted by the rule of
// al.essio.dev/pkg/shellescape v1.5.0, Quote, which createEnvFile
// calls: two single quotes for an empty string; s as it is when each
// of its bytes is an ASCII letter or digit or one of _@%+=:,./-;
// otherwise s in single quotes, each single quote in it closed, written
// in double quotes and opened again ('"'"').
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for i := range len(s) {
		if !shellSafe(s[i]) {
			return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
		}
	}
	return s
}

// shellSafe reports whether b is left unquoted by [shellQuote].
func shellSafe(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("_@%+=:,./-", b) >= 0
}

// configMapFiles is the files of cm as mountData writes them: a file
// for each key of its Data, none for its BinaryData, which the plugin
// does not read, each content with its newlines unescaped
// ([unescapeNewlines]).
func configMapFiles(cm corev1.ConfigMap) map[string][]byte {
	files := make(map[string][]byte, len(cm.Data))
	for key, value := range cm.Data {
		files[key] = unescapeNewlines(value)
	}
	return files
}

// unescapeNewlines is s as normalizeVolumeFileContent makes it, for a
// PEM certificate written on one line in a YAML file: each \n (a
// backslash and an n) a newline when s has no newline, s as it is
// otherwise.
func unescapeNewlines(s string) []byte {
	if strings.Contains(s, "\n") {
		return []byte(s)
	}
	return []byte(strings.ReplaceAll(s, `\n`, "\n"))
}

// fileMode is the mode of a volume's files, its defaultMode, as
// mountData takes it; 0644 when it has none, which the API server sets
// on every pod (the plugin dereferences it, and would panic).
func fileMode(defaultMode *int32) os.FileMode {
	if defaultMode == nil {
		return 0o644
	}
	return os.FileMode(*defaultMode) & os.ModePerm
}
