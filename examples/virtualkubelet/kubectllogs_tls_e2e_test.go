package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pingnode/pingnode/internal/testpki"
)

// signServing writes a serving certificate for 127.0.0.1, signed by the
// CA whose PEM files are caCert and caKey (an EC key), and its key, into
// dir, and returns their files.
func signServing(t *testing.T, dir, caCert, caKey string) (cert, key string) {
	t.Helper()
	read := func(file string) ([]byte, []byte) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(data)
		if block == nil {
			t.Fatalf("%s: no PEM block", file)
		}
		return data, block.Bytes
	}
	caPEM, caDER := read(caCert)
	_, keyDER := read(caKey)
	ca := &testpki.CA{PEM: caPEM}
	var err error
	if ca.Cert, err = x509.ParseCertificate(caDER); err != nil {
		t.Fatal(err)
	}
	if ca.Key, err = x509.ParseECPrivateKey(keyDER); err != nil {
		t.Fatal(err)
	}
	leaf := ca.Issue(t, testpki.Options{CommonName: "vk-logs-tls", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	cert, key = filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key")
	for file, data := range map[string][]byte{cert: leaf.CertPEM, key: leaf.KeyPEM} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cert, key
}

// TestKubectlLogsTLS: on a control plane of its own that checks kubelets'
// certificates (testenv -kubelet-tls), kubectl logs works with a serving
// certificate its CA signed, and with -kubelet-client-ca the provider
// serves the API server's client certificate alone: a client without one
// is refused at the handshake. A provider with the certificate it makes
// at start is refused by that API server: the check is real.
func TestKubectlLogsTLS(t *testing.T) {
	needsControlPlane(t)
	dir := filepath.Join(t.TempDir(), "env")
	cmd, kubeconfig, err := startEnv(testenvBin, dir, "-kubelet-tls")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopEnv(cmd) })
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	caCert := filepath.Join(dir, "kubelet-ca.crt")
	cert, key := signServing(t, t.TempDir(), caCert, filepath.Join(dir, "kubelet-ca.key"))
	url := samplePlugin(t)
	const signed, selfSigned = "vk-logs-tls", "vk-logs-self-signed"
	runProviderProcess(t, kubeconfig, "-plugin", url, "-node", signed, "-kubelet-addr", "127.0.0.1:0",
		"-kubelet-cert", cert, "-kubelet-key", key, "-kubelet-client-ca", caCert)
	runProviderProcess(t, kubeconfig, "-plugin", url, "-node", selfSigned, "-kubelet-addr", "127.0.0.1:0")

	pods := admin.CoreV1().Pods(metav1.NamespaceDefault)
	for _, node := range []string{signed, selfSigned} {
		within(t, 2*time.Minute, node+"'s pod runs", func(ctx context.Context) (bool, string) {
			if _, err := pods.Get(ctx, node, metav1.GetOptions{}); err != nil {
				_, err = pods.Create(ctx, echoPod(node, node, "echo hello; sleep 600"), metav1.CreateOptions{})
				return false, fmt.Sprint(err) // the default ServiceAccount may not be there yet
			}
			p, err := pods.Get(ctx, node, metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning, fmt.Sprint(p.Status.Phase, err)
		})
	}
	logOf := func(name string) (string, error) {
		out, err := pods.GetLogs(name, &corev1.PodLogOptions{Container: "job"}).DoRaw(t.Context())
		return string(out), err
	}
	if got, err := logOf(signed); err != nil || got != "hello\n" {
		t.Errorf("kubectl logs with a certificate its CA signed: %q, %v; want hello", got, err)
	}
	if got, err := logOf(selfSigned); err == nil || !strings.Contains(got, "x509: certificate signed by unknown authority") {
		t.Errorf("kubectl logs with a self-signed certificate: %q, %v; want the API server to refuse the certificate", got, err)
	}

	node, err := admin.CoreV1().Nodes().Get(t.Context(), signed, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	pemCA, _ := os.ReadFile(caCert)
	roots.AppendCertsFromPEM(pemCA)
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)))
	if resp, err := anonymous.Get("https://" + addr + "/containerLogs/default/" + signed + "/job"); err == nil {
		_ = resp.Body.Close()
		t.Errorf("a client without a certificate: %s, want refused at the handshake", resp.Status)
	}
}
