package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
)

// The API server's flags: its service account key, its serving and
// storage, and its authorization.

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
