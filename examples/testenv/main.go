// Command testenv runs, on loopback and in one process, a real etcd
// (embedded), kube-apiserver, kube-scheduler and kube-controller-manager
// (all built from k8s.io/kubernetes), for pingnode's end-to-end tests and
// for trying the Virtual Kubelet example by hand. It writes a kubeconfig,
// prints "ready <kubeconfig>" once every component answers its health
// check, and serves until SIGINT or SIGTERM, then stops them all and exits.
//
//	go run ./examples/testenv -dir /tmp/pingnode-env
//
// The controller manager runs only [Controllers]: the node lifecycle
// controller (the node.kubernetes.io/not-ready and unreachable taints), the
// taint eviction controller (deletes a Pod from a node with a NoExecute
// taint it does not tolerate, once its tolerationSeconds have passed), the
// garbage collector (deletes an object whose owners are gone, such as the
// Lease of a deleted Node), the serviceaccount controller (the
// "default" ServiceAccount that Pods need), the resource claim
// controller (the ResourceClaim of a Pod's claim made from a
// ResourceClaimTemplate, for Dynamic Resource Allocation) and the device
// taint eviction controller (deletes a Pod whose claim holds a device with
// a NoExecute taint its request does not tolerate), so a Pod created in
// any namespace is scheduled onto a fitting, Ready node.
//
// # Eviction
//
// The node lifecycle controller looks at every node each second (each 5s
// in a real cluster) and puts the NoExecute taint on a node that is not
// Ready within about a second (a real cluster taints at most one node each
// 10s); a node whose status and Lease are not renewed turns Unknown after
// 50s, as in a real cluster. Its zone rules are a real cluster's: while no
// node of the cluster is Ready ("full disruption", taken for a fault of
// the control plane rather than of the nodes) it takes the NoExecute
// taints off and puts none on; in a zone where more than two nodes, and at
// least 55% of its nodes, are not Ready ("partial disruption") it puts
// none on, in a cluster of up to 50 nodes. Nodes without a
// topology.kubernetes.io/zone label make one zone. A test of eviction
// therefore keeps another node Ready for as long as it waits, best in a
// zone of the test's own, where other tests' nodes do not count.
//
// # Access
//
// The administrator authenticates with [Token], a static token of the user
// pingnode-admin in the group system:masters, which is allowed everything
// in either mode below; ServiceAccount tokens minted through the
// TokenRequest API (create serviceaccounts/token) authenticate as
// system:serviceaccount:<namespace>:<name>. The scheduler and the
// controller manager use the administrator's kubeconfig: they do not have
// an identity each, as a real cluster's do.
//
// By default authorization is AlwaysAllow: every request is allowed. With
// -rbac the API server authorizes as a real cluster does
// (--authorization-mode=Node,RBAC) and admits with NodeRestriction beside
// the default admission plugins: a ServiceAccount may do only what the
// Roles and ClusterRoles bound to it allow, and a kubelet (user
// system:node:<name> in the group system:nodes) what the Node authorizer
// and NodeRestriction give it: its own Node and Lease, and the Pods bound
// to it with the Secrets, ConfigMaps and volumes they use, but not another
// node's. Either way, testenv is for tests on this machine only, and
// listens on 127.0.0.1 alone.
//
// -dir is emptied first only if testenv made it: see [Marker]. A folder
// that is not empty and has no marker is refused with exit status 2. With
// -keep, a folder testenv made is used as it is, etcd's data included: the
// control plane starts again where it stopped (give the same -port and
// -rbac, so that clients find it as it was).
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
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
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "testenv: -dir is required")
		os.Exit(2)
	}
	err := run(options{dir: *dir, port: *port, keep: *keep, rbac: *rbac})
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

// serviceAccountKey returns the file of the key that signs ServiceAccount
// tokens, in dir: the one an earlier run left (with -keep, so that tokens
// minted before a restart of the control plane stay valid, as in a real
// cluster), or a new one.
func serviceAccountKey(dir string) (string, error) {
	keyFile := filepath.Join(dir, "sa.key")
	if _, err := os.Stat(keyFile); err == nil {
		return keyFile, nil
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return keyFile, os.WriteFile(keyFile, pemKey, 0o600)
}

// apiServerArgs are kube-apiserver's flags: serving on port of 127.0.0.1,
// storing in the etcd at etcdURL, keeping its files in dir, and authorizing
// as [authorizationArgs] says.
func apiServerArgs(dir, etcdURL string, port int, rbac bool) ([]string, error) {
	keyFile, err := serviceAccountKey(dir)
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(Token+",pingnode-admin,pingnode-admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	args := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--etcd-servers=" + etcdURL,
		"--token-auth-file=" + tokens,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + keyFile,
		"--service-account-signing-key-file=" + keyFile,
		"--service-cluster-ip-range=10.96.0.0/24",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--v=0",
	}
	return append(args, authorizationArgs(rbac)...), nil
}

// authorizationArgs are the API server's flags for authorization and the
// admission plugins that go with it: AlwaysAllow, or with rbac those of a
// real cluster.
func authorizationArgs(rbac bool) []string {
	if !rbac {
		return []string{"--authorization-mode=AlwaysAllow"}
	}
	return []string{
		// The Node authorizer answers for kubelets (its graph of Pods
		// gives one the Secrets, ConfigMaps and volumes of the Pods bound
		// to it); RBAC answers what it does not allow. The API server
		// allows the group system:masters everything before asking
		// either, so the administrator's token, the probes and the
		// scheduler and controller manager that use it keep all their
		// rights.
		"--authorization-mode=Node,RBAC",
		// NodeRestriction (off by default) keeps a kubelet to writing its
		// own Node and the Pods of its node: the Node authorizer lets any
		// kubelet write any Node and leaves the name to this plugin.
		// Named here, it is enabled beside the default plugins.
		"--enable-admission-plugins=NodeRestriction",
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
