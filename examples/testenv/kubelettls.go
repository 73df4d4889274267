package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// The files of -kubelet-tls in -dir: the CA that signs kubelets' serving
// certificates and the API server's client certificate to kubelets, and
// that client certificate.
const (
	KubeletCACert     = "kubelet-ca.crt"
	KubeletCAKey      = "kubelet-ca.key"
	kubeletClientCert = "apiserver-kubelet-client.crt"
	kubeletClientKey  = "apiserver-kubelet-client.key"
)

// kubeletTLSArgs makes, in dir, the CA of -kubelet-tls and a client
// certificate it signs for the API server (CN kube-apiserver-kubelet-
// client, as kubeadm names it), or keeps those an earlier run left, and
// returns the API server's flags that use them: each kubelet's serving
// certificate is checked against the CA (--kubelet-certificate-authority,
// which kubeadm does not set), and the API server presents the client
// certificate to kubelets (--kubelet-client-certificate and -key).
func kubeletTLSArgs(dir string) ([]string, error) {
	caCert, caKey := filepath.Join(dir, KubeletCACert), filepath.Join(dir, KubeletCAKey)
	clientCert, clientKey := filepath.Join(dir, kubeletClientCert), filepath.Join(dir, kubeletClientKey)
	args := []string{
		"--kubelet-certificate-authority=" + caCert,
		"--kubelet-client-certificate=" + clientCert,
		"--kubelet-client-key=" + clientKey,
	}
	if _, err := os.Stat(clientKey); err == nil {
		return args, nil // -keep: the earlier run's
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "testenv-kubelet-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caPriv, caDER, err := certificate(ca, ca, nil)
	if err != nil {
		return nil, err
	}
	client := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	signed, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	clientPriv, clientDER, err := certificate(client, signed, caPriv)
	if err != nil {
		return nil, err
	}
	for file, block := range map[string]*pem.Block{
		caCert:     {Type: "CERTIFICATE", Bytes: caDER},
		caKey:      {Type: "EC PRIVATE KEY", Bytes: caPriv},
		clientCert: {Type: "CERTIFICATE", Bytes: clientDER},
		clientKey:  {Type: "EC PRIVATE KEY", Bytes: clientPriv},
	} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// certificate makes a P-256 key and the certificate of template for it,
// signed by parent with parentKey (a DER EC key; nil: self-signed), and
// returns the key and the certificate, both DER.
func certificate(template, parent *x509.Certificate, parentKey []byte) (key, cert []byte, err error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	signer := priv
	if parentKey != nil {
		if signer, err = x509.ParseECPrivateKey(parentKey); err != nil {
			return nil, nil, err
		}
	}
	if cert, err = x509.CreateCertificate(rand.Reader, template, parent, &priv.PublicKey, signer); err != nil {
		return nil, nil, err
	}
	key, err = x509.MarshalECPrivateKey(priv)
	return key, cert, err
}
