package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// config is what the flags say.
type config struct {
	addr           string        // -addr
	sidecar        string        // -sidecar
	responseHeader time.Duration // -response-header-timeout
}

// errUsage is what parseFlags returns for a flag it refused, once it has
// said why: the command exits with status 2, as the flag package does.
var errUsage = errors.New("usage")

// parseFlags reads the flags in args and checks them all; it writes to
// stderr why it refuses them.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("interlinkapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.addr, "addr", "127.0.0.1:3000", "`host:port` to serve interLink's API on (port 0: any free port)")
	fs.StringVar(&c.sidecar, "sidecar", "http://127.0.0.1:4000", "the plugin's base `URL`, to which /status, /create, /delete and /getLogs are appended (interLink's SidecarURL:SidecarPort)")
	fs.DurationVar(&c.responseHeader, "response-header-timeout", 120*time.Second, "how long to wait for the headers of the plugin's answer (interLink's client: 120s)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	refuse := func(format string, a ...any) (config, error) {
		fmt.Fprintf(stderr, format+"\n", a...)
		fs.Usage()
		return config{}, errUsage
	}
	if fs.NArg() > 0 {
		return refuse("interlinkapi takes no arguments, got %q", fs.Args())
	}
	if _, _, err := net.SplitHostPort(c.addr); err != nil {
		return refuse("-addr: %v", err)
	}
	if err := checkSidecar(c.sidecar); err != nil {
		return refuse("-sidecar: %v", err)
	}
	if c.responseHeader <= 0 {
		return refuse("-response-header-timeout: want a positive duration, got %v", c.responseHeader)
	}
	return c, nil
}

// checkSidecar reports what is wrong with raw as the sidecar's base URL:
// interLink takes only http:// for a TCP sidecar (cmd/interlink/main.go)
// and appends the API's paths to it as a string, so a trailing slash, a
// query or a fragment would end up in every path.
func checkSidecar(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http":
		return fmt.Errorf("want an http:// URL, got %q", raw)
	case u.Host == "":
		return fmt.Errorf("no host in %q", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "/") || strings.ContainsAny(raw, "?#"):
		return fmt.Errorf("want scheme, host, port and an optional path without a trailing slash, got %q", raw)
	}
	return nil
}

// newClient returns the client interLink's API calls its sidecar with
// (cmd/interlink/main.go): no overall timeout, the response's headers
// within responseHeader, no proxy.
func newClient(responseHeader time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 90 * time.Second, KeepAlive: 90 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext:           dialer.DialContext,
		MaxConnsPerHost:       10000,
		MaxIdleConnsPerHost:   1000,
		IdleConnTimeout:       120 * time.Second,
		ResponseHeaderTimeout: responseHeader,
	}}
}

// run serves interLink's API as the flags in args say until ctx is done,
// and returns the exit status. It writes to stderr one line with
// "serving interLink's API on http://HOST:PORT", the bound address, once
// it listens.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return 2
	}
	logger := log.New(stderr, "interlinkapi: ", log.LstdFlags)
	l, err := net.Listen("tcp", c.addr)
	if err != nil {
		logger.Print(err)
		return 1
	}
	a := newAPI(c.sidecar, newClient(c.responseHeader), logger)
	// interLink's http:// server (cmd/interlink/main.go): these two
	// timeouts, none for writing, so that a followed log can stream.
	server := &http.Server{Handler: a.routes(), ReadTimeout: 30 * time.Second, ReadHeaderTimeout: 10 * time.Second, ErrorLog: logger}
	done := make(chan error, 1)
	go func() { done <- server.Serve(l) }()
	logger.Printf("serving interLink's API on http://%s (in front of %s)", l.Addr(), c.sidecar)
	select {
	case err = <-done:
		logger.Print(err)
		return 1
	case <-ctx.Done():
		_ = server.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			logger.Print(err)
		}
		return 0
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}
