package pingclient

import "flag"

// AddFlags registers on fs the flags of the ways to reach a plugin, each
// name after prefix ("" or "plugin-", say), and binds them to c's fields:
// -ca-file, -ca-only, -cert-file, -key-file, -token-file,
// -insecure-skip-tls-verify and -http-path. The plugin's URL, the timeout
// and the body limit are the caller's own flags. Programs that call it
// register the same flags with the same help. [Config.Validate] then names
// these flags in its messages.
func (c *Config) AddFlags(fs *flag.FlagSet, prefix string) {
	c.flagPrefix = prefix
	fs.StringVar(&c.CAFile, prefix+flagCAFile, "", "PEM `file` of CA certificates that verify the plugin's server certificate, trusted besides the system's (interLink's TLS.CACertFile); read again when it changes")
	fs.BoolVar(&c.CAOnly, prefix+flagCAOnly, false, "trust the CAs of "+c.flag(flagCAFile)+" alone, not the system's")
	fs.StringVar(&c.CertFile, prefix+flagCertFile, "", "PEM `file` of the client certificate for mutual TLS, with "+c.flag(flagKeyFile)+" (interLink's TLS.CertFile); read again when it changes")
	fs.StringVar(&c.KeyFile, prefix+flagKeyFile, "", "PEM `file` of the client certificate's private key (interLink's TLS.KeyFile); read again when it changes")
	fs.StringVar(&c.TokenFile, prefix+flagTokenFile, "", "`file` holding a bearer token to send to the plugin (interLink's VKTokenFile); read again when it changes")
	fs.BoolVar(&c.InsecureSkipTLSVerify, prefix+flagInsecure, false, "accept any server certificate: anyone between here and the plugin can answer for it and read the token")
	fs.StringVar(&c.Path, prefix+flagPath, "", "with a unix:///path/to/plugin.sock URL, the HTTP `path` of the request (default "+DefaultPath+")")
}
