// Package testpki makes certificate authorities and certificates for
// tests of TLS: ECDSA P-256 keys, certificates valid from an hour ago to an
// hour from now unless told otherwise, and their PEM encodings, to write to
// files.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// CA is a certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// PEM is the CA's certificate, PEM-encoded.
	PEM []byte
}

// Leaf is a certificate with its key.
type Leaf struct {
	tls.Certificate
	// CertPEM and KeyPEM are the certificate and the key, PEM-encoded.
	CertPEM, KeyPEM []byte
	// Serial is the certificate's serial number.
	Serial *big.Int
}

// Options say what a certificate is for.
type Options struct {
	// CommonName is the subject's common name.
	CommonName string
	// DNSNames and IPs are the names the certificate is valid for.
	DNSNames []string
	IPs      []net.IP
	// Client makes a client certificate (extended key usage client
	// authentication); otherwise it is a server certificate.
	Client bool
	// NotBefore and NotAfter bound its validity; zero means an hour before
	// and an hour after now.
	NotBefore, NotAfter time.Time
}

// Loopback are the names of a test server on this machine.
var Loopback = Options{CommonName: "plugin", DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}

// NewCA returns a new certificate authority named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Pool returns a pool that holds the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// Issue returns a certificate signed by the CA.
func (ca *CA) Issue(t testing.TB, o Options) *Leaf {
	t.Helper()
	return issue(t, o, ca.Cert, ca.Key)
}

// SelfSigned returns a certificate signed by its own key.
func SelfSigned(t testing.TB, o Options) *Leaf {
	t.Helper()
	return issue(t, o, nil, nil)
}

func issue(t testing.TB, o Options, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) *Leaf {
	t.Helper()
	key := newKey(t)
	usage := x509.ExtKeyUsageServerAuth
	if o.Client {
		usage = x509.ExtKeyUsageClientAuth
	}
	notBefore, notAfter := o.NotBefore, o.NotAfter
	if notBefore.IsZero() {
		notBefore = time.Now().Add(-time.Hour)
	}
	if notAfter.IsZero() {
		notAfter = time.Now().Add(time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: o.CommonName},
		DNSNames:     o.DNSNames,
		IPAddresses:  o.IPs,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &Leaf{Certificate: pair, CertPEM: certPEM, KeyPEM: keyPEM, Serial: tmpl.SerialNumber}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
