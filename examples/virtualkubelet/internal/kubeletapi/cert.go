package kubeletapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"time"
)

// CertValidity is how long a certificate of [SelfSigned] is valid, from
// an hour before it is made, as client-go's GenerateSelfSignedCertKey
// makes a kubelet's (k8s.io/client-go/util/cert).
const CertValidity = 365 * 24 * time.Hour

// SelfSigned makes a serving certificate signed by its own new ECDSA
// P-256 key, valid from now less an hour for [CertValidity], for hosts:
// each an IP address SAN if it parses as one, a DNS name SAN otherwise.
// Its common name is the first host and now's Unix time, as client-go
// names a kubelet's (host@1700000000). It refuses no host and an empty
// one.
func SelfSigned(hosts []string, now time.Time) (tls.Certificate, error) {
	if len(hosts) == 0 {
		return tls.Certificate{}, errors.New("kubeletapi: a certificate needs a host")
	}
	validFrom := now.Add(-time.Hour)
	template := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", hosts[0], now.Unix())},
		NotBefore:             validFrom,
		NotAfter:              validFrom.Add(CertValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, host := range hosts {
		switch ip := net.ParseIP(host); {
		case host == "":
			return tls.Certificate{}, errors.New("kubeletapi: a certificate's host is empty")
		case ip != nil:
			template.IPAddresses = append(template.IPAddresses, ip)
		default:
			template.DNSNames = append(template.DNSNames, host)
		}
	}
	// A uniform serial in [1, MaxInt64), as client-go draws it.
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64-1))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubeletapi: serial: %w", err)
	}
	template.SerialNumber = serial.Add(serial, big.NewInt(1))
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubeletapi: key: %w", err)
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubeletapi: certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubeletapi: certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// ServerTLS is the TLS configuration of a kubelet API serving cert: TLS
// 1.2 at least; with a non-nil clientCA, a client must present a
// certificate that verifies against clientCA, or the handshake fails;
// with none, no client certificate is asked.
func ServerTLS(cert tls.Certificate, clientCA *x509.CertPool) *tls.Config {
	c := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.NoClientCert,
	}
	if clientCA != nil {
		c.ClientAuth = tls.RequireAndVerifyClientCert
		c.ClientCAs = clientCA
	}
	return c
}
