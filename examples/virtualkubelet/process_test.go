package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// providerProcessEnv, set, makes the test binary run the provider's main
// instead of the tests (see testMain).
const providerProcessEnv = "PINGNODE_E2E_PROVIDER_PROCESS"

// providerProcess is the provider's main, with its flags, in a child
// process: this test binary, re-executed. It is the provider as an
// operator runs it, so that a test can SIGKILL it (nothing of it runs
// after that: no deferred call, no last write) and a benchmark can count
// its CPU time apart from the simulated plugin's and its own.
type providerProcess struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has ended
}

// providerEnv is the environment of a child process that runs the
// provider's main and exits at once (a flag refused, the rights printed):
// this one's, with providerProcessEnv set and, for a -race build, without
// the race detector's sleep of a second before a successful exit
// (GORACE's atexit_sleep_ms, a grace for other goroutines to report),
// which made such a child four times slower.
func providerEnv() []string {
	return append(os.Environ(), providerProcessEnv+"=1", "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// startProviderProcess starts the provider with args, against the test
// environment, as a ServiceAccount of its own bound to exactly the rights
// that -print-rbac gives for args; it is killed when the test ends, if
// still running.
func startProviderProcess(tb testing.TB, args ...string) *providerProcess {
	tb.Helper()
	a := accessOfArgs(tb, args)
	id := grant(tb, a.Nodes[0], a)
	return runProviderProcess(tb, id.kubeconfig(tb, envHost), args...)
}

// runProviderProcess starts the provider with args and the kubeconfig; it
// is killed when the test ends, if still running.
func runProviderProcess(tb testing.TB, kubeconfig string, args ...string) *providerProcess {
	tb.Helper()
	return runBinary(tb, os.Args[0], append(os.Environ(), providerProcessEnv+"=1"), kubeconfig, args...)
}

// runBinary starts bin, a provider's command (this test binary, or one
// built from another version), with env, the kubeconfig and args; it is
// killed when the test ends, if still running.
func runBinary(tb testing.TB, bin string, env []string, kubeconfig string, args ...string) *providerProcess {
	tb.Helper()
	log, err := os.CreateTemp(tb.TempDir(), "provider-*.log")
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"-kubeconfig", kubeconfig}, args...)...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &providerProcess{cmd: cmd, log: log.Name(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // how it ended shows in its log
		_ = log.Close()
		close(p.done)
	}()
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("the provider's log, last lines:\n%s", p.tail(30))
		}
		p.kill(tb)
	})
	return p
}

// tail is the end of the provider's log.
func (p *providerProcess) tail(lines int) string {
	log, _ := os.ReadFile(p.log)
	return tail(string(log), lines)
}

// kill SIGKILLs the provider and waits until it is gone.
func (p *providerProcess) kill(tb testing.TB) {
	tb.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL) // fails only if it has ended
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		tb.Errorf("provider %d still running 10s after SIGKILL", p.cmd.Process.Pid)
	}
}

// cpuSeconds is the CPU time the provider has used so far, user and
// system, from /proc.
func (p *providerProcess) cpuSeconds() (float64, error) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command's name, in parentheses, may hold spaces: count the
	// fields after it. utime and stime are fields 14 and 15 of the line.
	_, after, ok := strings.Cut(string(stat), ") ")
	fields := strings.Fields(after)
	if !ok || len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", p.cmd.Process.Pid, stat)
	}
	ticks := 0.0
	for _, f := range fields[11:13] {
		n, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return ticks / clockTicks, nil
}

// clockTicks is the unit of /proc's times, USER_HZ, 100 on Linux.
const clockTicks = 100
