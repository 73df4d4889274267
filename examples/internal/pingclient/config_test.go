package pingclient

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/internal/golden"
)

func TestValidate(t *testing.T) {
	long := "unix:///" + strings.Repeat("d", 100) + "/plugin.sock"
	tests := []struct {
		name   string
		prefix string
		args   []string
		url    string
		want   []string // the lines of the error
	}{
		{name: "http", url: "http://127.0.0.1:4000/status"},
		{name: "https with everything", url: "https://plugin.example/status", args: []string{"-ca-file", "ca.pem", "-ca-only", "-cert-file", "c.pem", "-key-file", "k.pem", "-token-file", "token"}},
		{name: "unix with a path and a token", url: "unix:///var/run/interlink.sock", args: []string{"-http-path", "/api/status", "-token-file", "token"}},
		{name: "insecure", url: "https://plugin.example/status", args: []string{"-insecure-skip-tls-verify"}},
		{name: "certificate without key", url: "https://plugin.example/status", args: []string{"-cert-file", "c.pem"}, want: []string{"-cert-file: needs -key-file"}},
		{name: "key without certificate", url: "https://plugin.example/status", args: []string{"-key-file", "k.pem"}, want: []string{"-key-file: needs -cert-file"}},
		{name: "CA only without a CA", url: "https://plugin.example/status", args: []string{"-ca-only"}, want: []string{"-ca-only: needs -ca-file"}},
		{name: "insecure with a CA", url: "https://plugin.example/status", args: []string{"-insecure-skip-tls-verify", "-ca-file", "ca.pem"}, want: []string{"-insecure-skip-tls-verify: with -ca-file, which it would ignore"}},
		{name: "HTTP path with an http URL", url: "http://plugin.example/status", args: []string{"-http-path", "/status"}, want: []string{"-http-path: only with a unix:// plugin URL; an http URL carries its own path"}},
		{name: "relative HTTP path", url: "unix:///run/p.sock", args: []string{"-http-path", "status"}, want: []string{"-http-path: want a path that starts with /, like /status"}},
		{name: "TLS files with http", url: "http://plugin.example/status", args: []string{"-ca-file", "ca.pem", "-cert-file", "c.pem", "-key-file", "k.pem"}, want: []string{
			"-ca-file: only with an https:// plugin URL", "-cert-file: only with an https:// plugin URL", "-key-file: only with an https:// plugin URL",
		}},
		{name: "insecure with a unix socket", url: "unix:///run/p.sock", args: []string{"-insecure-skip-tls-verify"}, want: []string{"-insecure-skip-tls-verify: only with an https:// plugin URL"}},
		{name: "flags with a prefix", prefix: "plugin-", url: "https://plugin.example/status", args: []string{"-plugin-cert-file", "c.pem", "-plugin-ca-only"}, want: []string{
			"-plugin-cert-file: needs -plugin-key-file", "-plugin-ca-only: needs -plugin-ca-file",
		}},
		{name: "no URL", want: []string{"plugin URL: empty"}},
		{name: "not a URL, and the URL not shown", url: "http://[::1/status?token=s3cret", want: []string{"plugin URL: not a URL: missing ']' in host"}},
		{name: "other scheme", url: "ftp://plugin.example/status", want: []string{`plugin URL: scheme "ftp": want http, https or unix`}},
		{name: "no host", url: "https:///status", want: []string{"plugin URL: no host"}},
		{name: "unix with a relative path", url: "unix://run/p.sock", want: []string{"plugin URL: a unix URL names a socket by its absolute path, as in unix:///var/run/plugin.sock"}},
		{name: "socket path too long", url: long, want: []string{"plugin URL: the socket's path is 113 bytes long, more than the 107 that a Unix socket address holds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			cfg.AddFlags(fs, tt.prefix)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg.URL = tt.url
			var got []string
			if err := cfg.Validate(); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAddFlags: the flags fill the configuration, with the same names
// after any prefix, and the help is the golden's.
func TestAddFlags(t *testing.T) {
	for _, prefix := range []string{"", "plugin-"} {
		var cfg Config
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		cfg.AddFlags(fs, prefix)
		args := []string{
			"-ca-file", "ca.pem", "-ca-only", "-cert-file", "c.pem", "-key-file", "k.pem",
			"-token-file", "token", "-insecure-skip-tls-verify", "-http-path", "/api/status",
		}
		for i := range args {
			if strings.HasPrefix(args[i], "-") {
				args[i] = "-" + prefix + args[i][1:]
			}
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		want := Config{
			CAFile: "ca.pem", CAOnly: true, CertFile: "c.pem", KeyFile: "k.pem", TokenFile: "token",
			InsecureSkipTLSVerify: true, Path: "/api/status", flagPrefix: prefix,
		}
		if diff := cmp.Diff(want, cfg, cmp.AllowUnexported(Config{})); diff != "" {
			t.Errorf("prefix %q: Config (-want +got):\n%s", prefix, diff)
		}
	}

	var help bytes.Buffer
	for _, prefix := range []string{"", "plugin-"} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(&help)
		new(Config).AddFlags(fs, prefix)
		help.WriteString("$ flags with prefix \"" + prefix + "\"\n")
		fs.PrintDefaults()
	}
	golden.Check(t, "testdata/flags.golden", help.Bytes())
}
