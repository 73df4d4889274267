package pingclient

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
)

// tlsFiles are the files of the client's TLS configuration, each watched
// for a rotation: the CAs and the client certificate with its key. Either
// may be nil.
type tlsFiles struct {
	ca       *watched[*x509.CertPool]
	pair     *watched[*tls.Certificate]
	insecure bool
}

// newTLSFiles watches the TLS files that c names.
func newTLSFiles(c *Config) *tlsFiles {
	files := &tlsFiles{insecure: c.InsecureSkipTLSVerify}
	if c.CAFile != "" {
		system := !c.CAOnly
		files.ca = &watched[*x509.CertPool]{
			what:  "the CA certificates",
			flags: []string{c.flag(flagCAFile)},
			paths: []string{c.CAFile},
			parse: func(contents [][]byte) (*x509.CertPool, error) { return parseCAs(contents[0], system) },
		}
	}
	if c.CertFile != "" {
		files.pair = &watched[*tls.Certificate]{
			what:  "the client certificate",
			flags: []string{c.flag(flagCertFile), c.flag(flagKeyFile)},
			paths: []string{c.CertFile, c.KeyFile},
			parse: func(contents [][]byte) (*tls.Certificate, error) { return parsePair(contents[0], contents[1]) },
		}
	}
	return files
}

// load reads the files, at start.
func (f *tlsFiles) load() error {
	if f.ca != nil {
		if err := f.ca.load(); err != nil {
			return err
		}
	}
	if f.pair != nil {
		return f.pair.load()
	}
	return nil
}

// refresh reads the files again and reports whether the configuration
// changed.
func (f *tlsFiles) refresh(log *slog.Logger) bool {
	changed := f.ca != nil && f.ca.refresh(log)
	if f.pair != nil && f.pair.refresh(log) {
		changed = true
	}
	return changed
}

// config returns the TLS configuration of the files in use: TLS 1.2 at
// least, the CAs (nil: the system's), and the client certificate, sent
// whatever CAs the server names.
func (f *tlsFiles) config() *tls.Config {
	config := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: f.insecure}
	if f.ca != nil {
		config.RootCAs = f.ca.value
	}
	if f.pair != nil {
		pair := f.pair.value
		config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return pair, nil }
	}
	return config
}

// parseCAs returns the pool of the certificates in a PEM bundle, with the
// system's CAs when system is set.
func parseCAs(content []byte, system bool) (*x509.CertPool, error) {
	blocks, err := pemBlocks(content)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if system {
		if pool, err = x509.SystemCertPool(); err != nil {
			return nil, fmt.Errorf("the system's CAs: %w", err)
		}
	}
	n := 0
	for i, block := range blocks {
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: %w", i+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, errors.New("no CERTIFICATE in the PEM data")
	}
	return pool, nil
}

// parsePair returns the client certificate and its key. The certificate
// file may hold the chain after the certificate.
func parsePair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	if _, err := pemBlocks(certPEM); err != nil {
		return nil, fileProblem{0, err}
	}
	if _, err := pemBlocks(keyPEM); err != nil {
		return nil, fileProblem{1, err}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &pair, nil
}

// pemBlocks returns the PEM blocks of content. A block that starts and
// does not end (a file half written) is an error, where pem.Decode would
// stop there and keep the blocks before it.
func pemBlocks(content []byte) ([]*pem.Block, error) {
	var blocks []*pem.Block
	rest := content
	for {
		block, next := pem.Decode(rest)
		if block == nil {
			break
		}
		blocks = append(blocks, block)
		rest = next
	}
	if bytes.Contains(rest, []byte("-----BEGIN")) {
		return nil, fmt.Errorf("PEM block %d does not end: the file is cut short or malformed", len(blocks)+1)
	}
	if len(blocks) == 0 {
		return nil, errors.New("no PEM data")
	}
	return blocks, nil
}
