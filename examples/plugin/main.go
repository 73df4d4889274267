// Command plugin is a small plugin status endpoint, standard library only:
// it describes its backend with pingstatus's wire types, checks the reply
// with Validate, and serves it.
//
//	go run ./examples/plugin -addr 127.0.0.1:4000 -cpu 64 -memory 250000Mi -gpu nvidia.com/gpu=4
//	curl -s 127.0.0.1:4000/status | go run ./examples/pingcheck -strict -
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pingnode/pingnode/pingstatus"
)

// Backend is what the backend can take right now. A real plugin would ask
// Slurm, HTCondor or a remote cluster.
type Backend struct {
	CPU, Memory, Pods string
	// Devices maps an extended resource name to a count of devices.
	Devices map[string]int
	// Draining asks for a NoSchedule taint; false removes it.
	Draining bool
}

// DrainKey is the taint this plugin sets while its backend drains.
const DrainKey = "plugin.example.com/draining"

// Reply is the ping reply that describes b.
func Reply(b Backend) pingstatus.PingResponse {
	reply := pingstatus.PingResponse{
		Status:    "ok",
		Resources: &pingstatus.ResourcesResponse{CPU: b.CPU, Memory: b.Memory, Pods: b.Pods},
		Taints:    pingstatus.TaintList(), // the plugin's whole list: empty removes its taint
	}
	names := make([]string, 0, len(b.Devices))
	for name := range b.Devices {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		reply.Resources.Accelerators = append(reply.Resources.Accelerators,
			pingstatus.AcceleratorResponse{ResourceType: name, Available: strconv.Itoa(b.Devices[name])})
	}
	if b.Draining {
		reply.Taints = pingstatus.TaintList(pingstatus.TaintResponse{Key: DrainKey, Value: "true", Effect: "NoSchedule"})
	}
	return reply
}

// Handler serves GET /status with the reply for current(). A reply that
// Validate finds fault with is not served: the handler answers 500 with the
// problems, and the provider, which takes a failed ping as a failed ping,
// keeps the node's resources and taints as they are and marks its
// connectivity condition False.
func Handler(current func() Backend) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		reply := Reply(current())
		if problems := reply.Validate(pingstatus.Options{}); len(problems) > 0 {
			lines := make([]string, len(problems))
			for i, p := range problems {
				lines[i] = p.String()
			}
			http.Error(w, "reply refused by its own check:\n"+strings.Join(lines, "\n"), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
	})
	return mux
}

func main() {
	addr := flag.String("addr", "127.0.0.1:4000", "address to listen on")
	var b Backend
	flag.StringVar(&b.CPU, "cpu", "64", "cpu available")
	flag.StringVar(&b.Memory, "memory", "250000Mi", "memory available")
	flag.StringVar(&b.Pods, "pods", "500", "pods available")
	flag.BoolVar(&b.Draining, "drain", false, "set the draining taint")
	b.Devices = map[string]int{}
	flag.Func("gpu", "a device as name=count, like nvidia.com/gpu=4 (repeatable)", func(s string) error {
		name, count, ok := strings.Cut(s, "=")
		n, err := strconv.Atoi(count)
		if !ok || err != nil {
			return fmt.Errorf("want name=count, got %q", s)
		}
		b.Devices[name] = n
		return nil
	})
	flag.Parse()
	server := &http.Server{Addr: *addr, Handler: Handler(func() Backend { return b }), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("serving the ping reply on http://%s/status", *addr)
	log.Fatal(server.ListenAndServe())
}
