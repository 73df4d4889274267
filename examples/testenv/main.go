// Command testenv runs a real etcd (embedded) and a real kube-apiserver
// (built from k8s.io/kubernetes) on loopback, for pingnode's end-to-end
// tests and for trying the Virtual Kubelet example by hand. It writes a
// kubeconfig, prints "ready <kubeconfig>" and serves until SIGINT or
// SIGTERM, then stops both and exits.
//
//	go run ./examples/testenv -dir /tmp/pingnode-env
//
// Authentication is one static token and authorization AlwaysAllow: it is
// for tests on this machine only, and listens on 127.0.0.1 alone.
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
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// Token is the bearer token of the one user, a member of system:masters.
const Token = "pingnode-testenv-token"

func main() {
	dir := flag.String("dir", "", "folder for etcd's data, certificates and the kubeconfig (required; emptied first)")
	port := flag.Int("port", 0, "the API server's port on 127.0.0.1 (0: a free one)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "testenv: -dir is required")
		os.Exit(2)
	}
	if err := run(*dir, *port); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(1)
	}
}

func run(dir string, port int) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	etcd, etcdURL, err := startEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.Close()

	if port == 0 {
		if port, err = freePort(); err != nil {
			return err
		}
	}
	args, err := apiServerArgs(dir, etcdURL, port)
	if err != nil {
		return err
	}
	server := app.NewAPIServerCommand()
	server.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- server.Execute() }() // returns after SIGINT or SIGTERM

	host := "https://127.0.0.1:" + strconv.Itoa(port)
	if err := waitReady(host, done); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, host); err != nil {
		return err
	}
	fmt.Println("ready", kubeconfig)
	return <-done
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

func apiServerArgs(dir, etcdURL string, port int) ([]string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	keyFile := filepath.Join(dir, "sa.key")
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyFile, pemKey, 0o600); err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(Token+",pingnode-admin,pingnode-admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--etcd-servers=" + etcdURL,
		"--token-auth-file=" + tokens,
		"--authorization-mode=AlwaysAllow",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + keyFile,
		"--service-account-signing-key-file=" + keyFile,
		"--service-cluster-ip-range=10.96.0.0/24",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--v=0",
	}, nil
}

// waitReady polls /readyz until it answers ok, the server stops, or two
// minutes pass.
func waitReady(host string, done <-chan error) error {
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, // self-signed, loopback only
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+Token)
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-done:
			return fmt.Errorf("kube-apiserver stopped before it was ready: %w", err)
		case <-ctx.Done():
			return errors.New("kube-apiserver not ready after 2 minutes")
		case <-time.After(200 * time.Millisecond):
		}
	}
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
