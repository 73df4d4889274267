package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// client talks to the real kube-apiserver that TestMain starts, as its
// administrator (system:masters); envConfig is its configuration. A
// provider never uses them: it runs with a ServiceAccount of its own,
// bound to the rights internal/rights gives it (see grant).
var (
	client    kubernetes.Interface
	envConfig *rest.Config
)

// testenvBin is the testenv binary TestMain runs.
var testenvBin string

// env is the running test environment, in envDir, its API server on
// envHost, its kubeconfig at envKubeconfig; restartEnv replaces it.
var (
	env           *exec.Cmd
	envDir        string
	envHost       string
	envKubeconfig string
)

// TestMain starts the test environment (a real etcd, kube-apiserver,
// kube-scheduler and kube-controller-manager on loopback,
// examples/testenv) once for all tests, and stops it after them. It runs
// with -rbac, authorizing as a real cluster does (Node and RBAC, and the
// NodeRestriction admission plugin): every provider the tests run has only
// the rights its ServiceAccount is given.
// $PINGNODE_TESTENV names a built testenv binary; without it, the test
// builds one (about 11 minutes cold, seconds with the build cache).
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if os.Getenv(providerProcessEnv) != "" { // re-executed as the provider
		serveProfiles(os.Getenv(profilesEnv))
		main()
		return 0
	}
	flag.Parse()
	if testing.Short() {
		// The unit tier: no control plane is built or started, and every
		// test that needs one skips (needsControlPlane).
		return m.Run()
	}
	// The environment dies with this process even if it is killed: the
	// death signal is tied to the thread that started it, so keep it.
	runtime.LockOSThread()
	tmp, err := os.MkdirTemp("", "pingnode-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	bin := os.Getenv("PINGNODE_TESTENV")
	if bin == "" {
		bin = filepath.Join(tmp, "testenv")
		start := time.Now()
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = "../testenv"
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the test environment:", err)
			return 1
		}
		fmt.Printf("testenv built in %s\n", time.Since(start).Round(time.Second))
	}

	testenvBin, envDir = bin, filepath.Join(tmp, "env")
	start := time.Now()
	var kubeconfig string
	env, kubeconfig, err = startEnv(bin, envDir, "-rbac")
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test environment:", err)
		return 1
	}
	defer func() { stopEnv(env) }()
	fmt.Printf("etcd, kube-apiserver, kube-scheduler and kube-controller-manager ready in %s\n", time.Since(start).Round(time.Millisecond))

	envKubeconfig = kubeconfig
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	config.QPS, config.Burst = 10000, 10000 // the validity test sends 20,000 requests
	envHost, envConfig = config.Host, config
	if client, err = kubernetes.NewForConfig(config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	// The tests cleaned up the identities they made.
	left, err := leftRights(context.Background())
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "listing what the tests left:", err)
		return 1
	case len(left) > 0 && code == 0:
		fmt.Fprintf(os.Stderr, "the tests left %d objects of the provider's rights:\n  %s\n", len(left), strings.Join(left, "\n  "))
		return 1
	}
	return code
}

// needsControlPlane skips the test in short mode (go test -short, the
// unit tier), where TestMain starts no control plane and client is nil.
// Every test that talks to the API server calls it first, or goes through
// a helper that does (grant, startProvider, ...).
func needsControlPlane(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the control plane (examples/testenv); run without -short")
	}
}

// startEnv starts the testenv binary and waits for its "ready" line.
func startEnv(bin, dir string, args ...string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, append([]string{"-dir", dir}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logFile, err := os.Create(dir + ".log")
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	ready := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if path, ok := strings.CutPrefix(scanner.Text(), "ready "); ok {
				ready <- path
			}
		}
		close(ready)
	}()
	select {
	case path, ok := <-ready:
		if ok {
			return cmd, path, nil
		}
	case <-time.After(3 * time.Minute):
	}
	stopEnv(cmd)
	log, _ := os.ReadFile(dir + ".log")
	return nil, "", fmt.Errorf("not ready; its log:\n%s", tail(string(log), 40))
}

// stopEnv asks the environment to stop, and kills it if it has not within
// 30 seconds.
func stopEnv(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func tail(s string, lines int) string {
	all := strings.Split(s, "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// defaultWait is how long eventually waits.
const defaultWait = 20 * time.Second

// eventually polls check every 50ms until it reports done, and fails the
// test with its last word after 20 seconds.
func eventually(t *testing.T, what string, check func(ctx context.Context) (bool, string)) {
	t.Helper()
	within(t, defaultWait, what, check)
}

// within is eventually with another limit.
func within(t testing.TB, limit time.Duration, what string, check func(ctx context.Context) (bool, string)) {
	t.Helper()
	withinEvery(t, limit, 50*time.Millisecond, what, check)
}

// withinEvery is within, polling every period: a check that lists
// thousands of nodes costs the API server more than what it measures
// when made every 50 ms.
func withinEvery(t testing.TB, limit, period time.Duration, what string, check func(ctx context.Context) (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	last := ""
	for {
		done, why := check(ctx)
		if done {
			return
		}
		last = why
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not after %s: %s", what, limit, last)
		case <-time.After(period):
		}
	}
}

// restartEnv stops the whole control plane and starts it again on the same
// etcd data and port, with -rbac as before, and calls during, if not nil,
// while it is down. testenv makes a new service account signing key at
// each start (a real cluster keeps its key), so the tokens minted before
// are refused (401) after it: it gives every identity in use a new one,
// as the kubelet rotates a pod's.
func restartEnv(t *testing.T, during func()) {
	t.Helper()
	u, err := url.Parse(envHost)
	if err != nil {
		t.Fatal(err)
	}
	stopEnv(env)
	if during != nil {
		during()
	}
	next, _, err := startEnv(testenvBin, envDir, "-keep", "-port", u.Port(), "-rbac")
	if err != nil {
		t.Fatalf("starting the control plane again: %v", err)
	}
	env = next
}

// profilesEnv names an address at which a provider process the tests
// start serves its profiles (net/http/pprof: /debug/pprof/heap,
// /debug/pprof/goroutine, /debug/pprof/profile), to see where a measured
// cost goes:
//
//	PINGNODE_PPROF_ADDR=127.0.0.1:6061 PINGNODE_PARTS_N=1000 go test -run 'TestPartsScale$' .
//	go tool pprof -top http://127.0.0.1:6061/debug/pprof/heap
const profilesEnv = "PINGNODE_PPROF_ADDR"

// serveProfiles serves the process's profiles at addr, if it is set.
func serveProfiles(addr string) {
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	server := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.ListenAndServe() }()
}
