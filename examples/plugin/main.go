package main

import (
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"log"
	"maps"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/pingstatus"
)

// Backend is what the backend can take right now. A real plugin would ask
// Slurm, HTCondor or a remote cluster.
type Backend struct {
	CPU, Memory, Pods string
	// EphemeralStorage is the scratch space pods may use; empty says
	// nothing of it.
	EphemeralStorage string
	// Hugepages maps a page size (2Mi, 1Gi) to the memory in such pages.
	Hugepages map[string]string
	// Devices maps an extended resource name to a count of devices.
	Devices map[string]int
	// Draining asks for a NoSchedule taint; false removes it.
	Draining bool
	// Labels are the node labels that describe the backend, key to value:
	// the plugin's whole set, so a label no longer in it leaves the node.
	Labels map[string]string
	// DeviceGroups are the backend's devices, for Dynamic Resource
	// Allocation: nil says nothing of them; otherwise the plugin's whole
	// list, so a group no longer in it leaves the node's devices. A
	// group's count is as the figures above: free now, or with Basis
	// "total" all of the group the backend gives the node.
	DeviceGroups []pingstatus.DeviceResponse
	// Basis is what the figures are: "available" (free now: what the
	// node's pods use on the backend is not in them), "total" (all the
	// backend gives the node), or "", not sent, which the provider reads
	// as available.
	Basis string
	// Parts are the backend's parts, served as the reply's nodes: nil
	// serves the backend as one node, with the figures and devices
	// above; otherwise the plugin's whole list, each part with its own
	// resources and devices (the figures and devices above are not
	// sent), and Draining and Labels every part's.
	Parts []pingstatus.PartResponse
}

// DrainKey is the taint this plugin sets while its backend drains.
const DrainKey = "plugin.example.com/draining"

// Reply is the ping reply that describes b.
func Reply(b Backend) pingstatus.PingResponse {
	reply := pingstatus.PingResponse{
		Status: "ok",
		NodeResponse: pingstatus.NodeResponse{
			Resources: &pingstatus.ResourcesResponse{
				CPU: b.CPU, Memory: b.Memory, Pods: b.Pods, EphemeralStorage: b.EphemeralStorage, Hugepages: maps.Clone(b.Hugepages), Basis: b.Basis,
			},
			Taints: []pingstatus.TaintResponse{}, // the plugin's whole list: empty removes its taint
			Labels: map[string]string{},          // the plugin's whole set: {} removes its labels
		},
	}
	maps.Copy(reply.Labels, b.Labels)
	names := make([]string, 0, len(b.Devices))
	for name := range b.Devices {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		reply.Resources.Accelerators = append(reply.Resources.Accelerators,
			pingstatus.AcceleratorResponse{ResourceType: name, Available: strconv.Itoa(b.Devices[name])})
	}
	if b.DeviceGroups != nil {
		reply.Devices = append([]pingstatus.DeviceResponse{}, b.DeviceGroups...)
	}
	if b.Draining {
		reply.Taints = []pingstatus.TaintResponse{{Key: DrainKey, Value: "true", Effect: "NoSchedule"}}
	}
	if b.Parts != nil { // the parts carry the resources and devices: a sum beside them is refused
		reply.Resources, reply.Devices = nil, nil
		reply.Nodes = append([]pingstatus.PartResponse{}, b.Parts...)
	}
	return reply
}

// Options are how the handler serves, beside its backend and its jobs.
// The zero value serves as the plugin does by default.
type Options struct {
	// Check are the provider's options, with which the handler judges
	// its reply: the label namespaces it allows.
	Check pingstatus.Options
	// Slurm serves as interLink's Slurm plugin does (-slurm): the ping
	// wants a body, and its reply is [SlurmReply], a zero in it served;
	// a create runs sbatch on the job's script, answering 504 whatever
	// sbatch writes on its stderr; a status answers every pod asked
	// about, in the Slurm plugin's shape, as its refreshes saw each job,
	// and fails for a job Slurm forgot without a status file; a delete
	// of a pod without a job gets no answer. The jobs, a Slurm fleet
	// (partsfleet.Config.Slurm), place them as Slurm does.
	Slurm bool
	// StatusCache is how long an answer to a pod status is served again,
	// to any pod status request, as the Slurm plugin's one cache for the
	// whole endpoint: 0 or less, never. The ping is never cached.
	StatusCache time.Duration
	// SbatchLatency is, with Slurm, how long sbatch takes: each create
	// waits this long before its job is made and it is answered.
	SbatchLatency time.Duration
	// ScancelFailures is, with Slurm, how many scancels fail, the first
	// ones: each such delete is answered 500 and its job kept.
	ScancelFailures int
	// SlurmData is, with Slurm, the folder under which each create
	// writes what the pod's job reads, as the Slurm plugin writes it
	// under its DataRootFolder ([podFiles]), and each delete that
	// cancels the job removes it; empty, nothing is written.
	SlurmData string
	// Now is the clock of the status cache, of the Slurm plugin's status
	// refreshes, and of the table of jobs made when Handler is given
	// none; nil is time.Now.
	Now func() time.Time
}

// Handler serves the ping, GET /status without pods, with the reply for
// current(), and interLink's plugin API for pods (package podapi) with
// jobs, the backend's table of pods: POST /create, GET /status with a
// list of pods, and POST /delete, as o says. Nil jobs is a table of its
// own where every pod starts at once. A reply that Validate finds fault
// with, judged with o.Check (the provider's: the label namespaces it
// allows), is not served: the handler answers 500 with the problems, and
// the provider, which takes a failed ping as a failed ping, keeps the
// node's resources, taints and labels as they are and marks its
// connectivity condition False.
func Handler(current func() Backend, jobs *partsfleet.Fleet, o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if jobs == nil {
		jobs = partsfleet.New(partsfleet.Config{Unbounded: true, Slurm: o.Slurm, Now: o.Now})
	}
	cache := &statusCache{ttl: o.StatusCache, now: o.Now}
	slurm := newSlurmPlugin(jobs, o)
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+podapi.CreatePath, func(w http.ResponseWriter, r *http.Request) {
		if o.Slurm {
			serveCreate(w, r, slurm.submit, mountOptions{slurm: true, data: o.SlurmData})
		} else {
			serveCreate(w, r, createIn(jobs), mountOptions{})
		}
	})
	mux.HandleFunc("GET "+AccountingPath, func(w http.ResponseWriter, _ *http.Request) { serveAccounting(w, jobs) })
	mux.Handle("GET "+podapi.LogsPath, serveLogs(jobs, o))
	mux.HandleFunc("POST "+podapi.DeletePath, func(w http.ResponseWriter, r *http.Request) {
		if o.Slurm {
			slurm.serveDelete(w, r)
		} else {
			serveDelete(w, r, jobs)
		}
	})
	mux.HandleFunc("GET "+podapi.StatusPath, func(w http.ResponseWriter, r *http.Request) {
		data, ok := readBody(w, r)
		if !ok {
			return
		}
		var pods []corev1.Pod
		if o.Slurm {
			if err := json.Unmarshal(data, &pods); err != nil { // no body too: the Slurm plugin decodes it as it is
				plainError(w, http.StatusInternalServerError, err.Error())
				return
			}
		} else if !decodeJSON(w, data, &pods, "no body, or a JSON list of pods") {
			return
		}
		if len(pods) > 0 {
			body, err := cache.answer(func() (any, error) {
				if o.Slurm {
					return slurm.statuses(pods, sessionOf(r))
				}
				return podStatuses(jobs, pods), nil
			})
			if err != nil { // as the Slurm plugin answers a refresh that failed
				plainError(w, http.StatusInternalServerError, err.Error())
				return
			}
			writeBody(w, body)
			return
		}
		servePing(w, current(), o)
	})
	return mux
}

// servePing answers the ping with the reply that describes b: [Reply],
// or with o.Slurm [SlurmReply], whose zeros are served, as the Slurm
// plugin serves them.
func servePing(w http.ResponseWriter, b Backend, o Options) {
	reply, check := Reply(b), o.Check
	if o.Slurm {
		reply, check.AllowZero = SlurmReply(b), true
	}
	if problems := reply.Validate(check); len(problems) > 0 {
		lines := make([]string, len(problems))
		for i, p := range problems {
			lines[i] = p.String()
		}
		http.Error(w, "reply refused by its own check:\n"+strings.Join(lines, "\n"), http.StatusInternalServerError)
		return
	}
	writeJSON(w, reply)
}

// RequireToken serves next only to requests that carry the bearer token
// read from file at each request, and answers 401 otherwise.
func RequireToken(file string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want, err := os.ReadFile(file)
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		token := strings.TrimSpace(string(want))
		if err != nil || token == "" || !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serverTLS is the TLS configuration of the server: its certificate, and
// with clientCA, client certificates required and verified.
func serverTLS(certFile, keyFile, clientCA string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	config := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA != "" {
		pem, err := os.ReadFile(clientCA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New(clientCA + ": no PEM certificate")
		}
		config.ClientCAs, config.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return config, nil
}

// handlerOf returns the handler that c describes, its clock now (nil:
// time.Now), and its table of jobs: with -parts-generate the fleet, which
// moves on at each ping and whose pods queue on its machines, served as
// parts, or with -slurm as one sum; otherwise the one node, or the
// -parts file, whose pods all start at once.
func handlerOf(c config, now func() time.Time) (http.Handler, *partsfleet.Fleet) {
	b := c.backend
	current := func() Backend { return b }
	jobs := partsfleet.New(partsfleet.Config{Unbounded: true, Slurm: c.slurm, MinJobAge: c.minJobAge, Now: now})
	if c.fleet != nil {
		config := *c.fleet
		config.Now = now
		fleet := partsfleet.New(config)
		current = func() Backend {
			b := b
			if c.slurm {
				sum := fleet.NextSum()
				b.CPU, b.Memory = sum.CPU, sum.Memory
			} else {
				b.Parts = fleet.Next()
			}
			return b
		}
		jobs = fleet
	}
	o := Options{Check: c.opts, Slurm: c.slurm, StatusCache: c.statusCache, SbatchLatency: c.sbatchLatency, ScancelFailures: c.scancelFailures, SlurmData: c.slurmData, Now: now}
	return Handler(current, jobs, o), jobs
}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		os.Exit(2)
	}
	handler, _ := handlerOf(c, nil)
	if c.tokenFile != "" {
		handler = RequireToken(c.tokenFile, handler)
	}
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	network, address, scheme := "tcp", c.addr, "http"
	if c.socket != "" {
		network, address = "unix", c.socket
	}
	l, err := net.Listen(network, address)
	if err != nil {
		log.Fatal(err)
	}
	if c.certFile != "" {
		if server.TLSConfig, err = serverTLS(c.certFile, c.keyFile, c.clientCA); err != nil {
			log.Fatal(err)
		}
		l, scheme = tls.NewListener(l, server.TLSConfig), "https"
	}
	if c.socket != "" {
		log.Printf("serving the ping reply on unix://%s (HTTP path /status)", c.socket)
	} else {
		log.Printf("serving the ping reply on %s://%s/status", scheme, l.Addr())
	}
	log.Fatal(server.Serve(l))
}
