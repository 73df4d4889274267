package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// Token is the bearer token of the one user, a member of system:masters.
const Token = "pingnode-testenv-token"

// stopTimeout bounds the wait for the components to stop after SIGTERM; it
// is below the 30s after which the e2e tests kill the environment.
const stopTimeout = 25 * time.Second

func main() {
	dir := flag.String("dir", "", "folder for etcd's data, certificates and the kubeconfig (required; created if missing, emptied first only if testenv made it)")
	port := flag.Int("port", 0, "the API server's port on 127.0.0.1 (0: a free one)")
	keep := flag.Bool("keep", false, "start again on the data an earlier run left in -dir (etcd's data, certificates) instead of emptying it: a restart of the control plane")
	rbac := flag.Bool("rbac", false, "authorize as a real cluster does, with the Node authorizer and RBAC, and admit with NodeRestriction (default: allow every request)")
	kubeletTLS := flag.Bool("kubelet-tls", false, "check each kubelet's serving certificate against a CA made in -dir ("+KubeletCACert+", its key "+KubeletCAKey+" beside it, to sign one), and present to kubelets a client certificate it signs (default: check none and present none, as kubeadm)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "testenv: -dir is required")
		os.Exit(2)
	}
	err := run(options{dir: *dir, port: *port, keep: *keep, rbac: *rbac, kubeletTLS: *kubeletTLS})
	var unsafe *UnsafeDirError
	switch {
	case errors.As(err, &unsafe):
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(1)
	}
}

// exit is how a component's run ended.
type exit struct {
	name string
	err  error
}

// stopped describes e as a component that ended unasked.
func (e exit) stopped() error {
	if e.err == nil {
		return fmt.Errorf("%s stopped", e.name)
	}
	return fmt.Errorf("%s stopped: %w", e.name, e.err)
}

// options are testenv's flags.
type options struct {
	dir  string // -dir: the folder testenv works in
	port int    // -port: the API server's port; 0 picks a free one
	keep bool   // -keep: start again on the data an earlier run left in dir
	rbac bool   // -rbac: authorize with Node and RBAC, admit with NodeRestriction
	// kubeletTLS is -kubelet-tls: check kubelets' certificates, present one.
	kubeletTLS bool
}

func run(opts options) error {
	// Absolute, because the scheduler's configuration file names the
	// kubeconfig, and "ready" prints it for another process to use.
	dir, err := filepath.Abs(opts.dir)
	if err != nil {
		return err
	}
	prepare := prepareDir
	if opts.keep {
		prepare = reuseDir
	}
	if err := prepare(dir); err != nil {
		return err
	}
	// The API server's command installs its own handler for these signals
	// and stops by itself; this context stops the other components.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	etcd, etcdURL, err := startEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.Close()

	port := opts.port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return err
		}
	}
	args, err := apiServerArgs(dir, etcdURL, port, opts.rbac)
	if err != nil {
		return err
	}
	if opts.kubeletTLS {
		tlsArgs, err := kubeletTLSArgs(dir)
		if err != nil {
			return err
		}
		args = append(args, tlsArgs...)
	}
	server := app.NewAPIServerCommand()
	server.SetArgs(args)
	exits := make(chan exit, 3) // one for each component, so none blocks
	go func() { exits <- exit{"kube-apiserver", server.Execute()} }()

	if err := waitReady(ctx, exits, probe{url: loopbackURL(port, "/readyz")}); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, loopbackURL(port, "")); err != nil {
		return err
	}
	schedulerPort, err := startScheduler(ctx, dir, kubeconfig, exits)
	if err != nil {
		return fmt.Errorf("kube-scheduler: %w", err)
	}
	managerPort, err := startControllerManager(ctx, kubeconfig, exits)
	if err != nil {
		return fmt.Errorf("kube-controller-manager: %w", err)
	}
	probes := []probe{
		// The scheduler is ready once its informers have synced and its
		// event handlers have seen every object listed at the start.
		{url: loopbackURL(schedulerPort, "/readyz")},
		// The serviceaccount controller has run: Pods can be created.
		{url: loopbackURL(port, "/api/v1/namespaces/default/serviceaccounts/default")},
	}
	for _, name := range Controllers {
		// The controller manager's /healthz lists a check for each
		// controller once it is built, just before it starts.
		probes = append(probes, probe{url: loopbackURL(managerPort, "/healthz?verbose"), want: "[+]" + name + " ok"})
	}
	if err := waitReady(ctx, exits, probes...); err != nil {
		return err
	}
	fmt.Println("ready", kubeconfig)

	var first exit
	select {
	case first = <-exits:
		// The API server's command returns nil only after a signal, which
		// may reach it before this context.
		asked := ctx.Err() != nil || (first.name == "kube-apiserver" && first.err == nil)
		if !asked {
			return first.stopped()
		}
	case <-ctx.Done():
	}
	return waitStopped(exits, first)
}

// waitStopped waits, after a signal, for the three components to end (first,
// if it has a name, has already), and reports what went wrong.
func waitStopped(exits <-chan exit, first exit) error {
	var errs []error
	ended := 0
	if first.name != "" {
		ended++
		if first.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", first.name, first.err))
		}
	}
	timeout := time.After(stopTimeout)
	for ; ended < cap(exits); ended++ {
		select {
		case e := <-exits:
			if e.err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", e.name, e.err))
			}
		case <-timeout:
			return errors.Join(append(errs, fmt.Errorf("%d components still running after %s", cap(exits)-ended, stopTimeout))...)
		}
	}
	return errors.Join(errs...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

func startEtcd(dir string) (*embed.Etcd, string, error) {
	clientPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	client := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(clientPort)}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(peerPort)}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "testenv"
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, client.String(), nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, "", errors.New("not ready after 60s")
	}
}

// probe is one readiness condition: a GET of url, with the token, answers
// 200 OK and, unless want is empty, a body that contains want.
type probe struct {
	url  string
	want string
}

// probeClient skips certificate checks: every component here serves with
// a self-signed certificate, on loopback only.
var probeClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}

// passes reports whether p holds now.
func (p probe) passes(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return false
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	resp, err := probeClient.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(body), p.want)
}

// waitReady polls the probes, in order, every 200ms until all have passed;
// it fails when a component ends, ctx ends or two minutes pass first.
func waitReady(ctx context.Context, exits <-chan exit, probes ...probe) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for len(probes) > 0 {
		if probes[0].passes(ctx) {
			probes = probes[1:]
			continue
		}
		select {
		case e := <-exits:
			return fmt.Errorf("before all were ready: %w", e.stopped())
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return errors.New("interrupted before all were ready")
			}
			return fmt.Errorf("%s: not ready after 2 minutes", probes[0].url)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

func writeKubeconfig(path, host string) error {
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: pingnode-admin
  user:
    token: %s
contexts:
- name: testenv
  context:
    cluster: testenv
    user: pingnode-admin
current-context: testenv
`, host, Token)
	return os.WriteFile(path, []byte(config), 0o600)
}
