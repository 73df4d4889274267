package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// fleetScale divides every interval of the provider in the fleet
// benchmark: pings every 500 ms instead of 5 s, a status report every
// 30 s instead of 5 minutes, the Lease renewed every second instead of
// 10 s. Every rate is then multiplied by it, and the per node-hour figures
// are divided back by it: what a node costs at the default intervals.
const fleetScale = 10

// fleetWindow is how long one measurement lasts: 120 ping intervals, two
// status reports, that is 10 minutes at the default intervals.
const fleetWindow = 120 * 5 * time.Second / fleetScale

// fleetSmoke makes BenchmarkFleet a smoke run.
var fleetSmoke = flag.Bool("fleet.smoke", false, "BenchmarkFleet as a smoke run: 10 nodes (unless $PINGNODE_FLEET_NODES says), no warm-up, a tenth of the window")

// fleetPlugin answers /status/{i} for every node of a fleet: a steady
// good reply, whose cpu figure changes for one node when asked.
type fleetPlugin struct {
	mu  sync.Mutex
	cpu []int
	// flip changes each node's reply at every ping, once set.
	flip bool
}

func (f *fleetPlugin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
	f.mu.Lock()
	ok := err == nil && i >= 0 && i < len(f.cpu)
	cpu := 0
	if ok {
		cpu = f.cpu[i]
		if f.flip {
			f.cpu[i] = 127 - cpu
		}
	}
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write([]byte(strings.Replace(goodReply, `"cpu":"64"`, fmt.Sprintf(`"cpu":"%d"`, cpu), 1)))
}

// flipping makes every reply differ from the node's last from now on.
func (f *fleetPlugin) flipping() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flip = true
}

// change makes node i's next reply differ from its last.
func (f *fleetPlugin) change(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cpu[i] = 127 - f.cpu[i] // 64, 63, 64...
}

// BenchmarkFleet runs N virtual nodes (100, or $PINGNODE_FLEET_NODES) in
// one provider process against the real control plane, each with a steady
// simulated plugin, and counts with the API server's own
// apiserver_request_total (and etcd_requests_total, what it asked etcd)
// what they cost over a window of 120 ping intervals, after a warm-up of a
// status report and a half (every node past its first, jittered, report).
// "changing" makes one reply of the fleet change at every ping interval.
// Every figure is per node-hour at the default intervals (see
// fleetScale); cpu-s is the provider process's CPU time.
//
//	cd examples/virtualkubelet && go test -run '^$' -bench Fleet -benchtime 1x -timeout 30m .
//
// With -fleet.smoke it is a smoke run for CI: 10 nodes, no warm-up, a
// tenth of the window; its figures are not the fleet's.
//
//	go test -run '^$' -bench Fleet -benchtime 1x . -fleet.smoke
//
// With -short (the unit tier: no control plane) it is skipped.
func BenchmarkFleet(b *testing.B) {
	needsControlPlane(b)
	nodes := 100
	if *fleetSmoke {
		nodes = 10
	}
	if s := os.Getenv("PINGNODE_FLEET_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("PINGNODE_FLEET_NODES=%q: want a number of nodes", s)
		}
		nodes = n
	}
	for _, changing := range []bool{false, true} {
		mode := "steady"
		if changing {
			mode = "changing"
		}
		b.Run(fmt.Sprintf("nodes=%d/%s", nodes, mode), func(b *testing.B) { benchmarkFleet(b, nodes, mode, changing) })
	}
}

func benchmarkFleet(b *testing.B, n int, mode string, changing bool) {
	interval := 5 * time.Second / fleetScale
	plugin := &fleetPlugin{cpu: make([]int, n)}
	for i := range plugin.cpu {
		plugin.cpu[i] = 64
	}
	server := httptest.NewServer(plugin)
	defer server.Close()
	prefix := "vk-fleet-" + mode + "-"
	b.Cleanup(func() { deleteFleet(b, prefix, n) })
	fleet := startProviderProcess(b, "-nodes", strconv.Itoa(n), "-node", prefix+Index, "-plugin", server.URL+"/status/"+Index,
		// The longest timeout the flags allow: the pings of a loaded
		// fleet must not fail for want of time, which would add writes.
		"-interval", interval.String(), "-timeout", (interval - interval/10).String(),
		"-status-report", (vnode.DefaultStatusReport / fleetScale).String(),
		"-lease-duration", "4s", "-lease-renew", (10 * time.Second / fleetScale).String())
	within(b, 5*time.Minute, fmt.Sprintf("%d nodes Ready with the good reply", n), func(ctx context.Context) (bool, string) {
		return fleetReady(ctx, prefix, n)
	})
	window := fleetWindow
	if *fleetSmoke {
		window /= 10
	} else {
		// The warm-up is part of the measurement, not a wait for a
		// condition: a status report and a half, by which every node is
		// past its first, jittered, report (up to one and a half after
		// its start), so the window counts steady reports only.
		time.Sleep(3 * vnode.DefaultStatusReport / fleetScale / 2)
	}

	var total requests
	cpu := 0.0
	b.ResetTimer()
	for range b.N {
		before := mustReadRequests(b)
		cpuBefore, err := fleet.cpuSeconds()
		if err != nil {
			b.Fatal(err)
		}
		if changing {
			ticker := time.NewTicker(interval)
			for step := range int(window / interval) {
				<-ticker.C
				plugin.change(step % n)
			}
			ticker.Stop()
		} else {
			time.Sleep(window)
		}
		d := mustReadRequests(b).since(before)
		cpuAfter, err := fleet.cpuSeconds()
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuAfter - cpuBefore
		total = total.plus(d)
	}
	b.StopTimer()
	nodeHours := float64(n) * float64(b.N) * float64(window*fleetScale) / float64(time.Hour)
	perNodeHour := func(x float64) float64 { return x / nodeHours }
	b.ReportMetric(perNodeHour(total.nodeWrites()), "node-writes/node-h")
	b.ReportMetric(perNodeHour(total.leaseWrites()), "lease-writes/node-h")
	b.ReportMetric(perNodeHour(total.api["GET nodes"]), "node-GETs/node-h")
	b.ReportMetric(perNodeHour(total.etcd["get nodes"]), "etcd-node-gets/node-h")
	b.ReportMetric(perNodeHour(total.api["LIST pods"]), "pod-LISTs/node-h")
	b.ReportMetric(perNodeHour(cpu), "cpu-s/node-h")
	b.Logf("%d nodes, %d windows of %s (%s at the default intervals), the provider's CPU %.1fs; counted:%s",
		n, b.N, window, window*fleetScale, cpu, total)
}

// plus adds two sets of counters.
func (r requests) plus(o requests) requests {
	sum := requests{api: map[string]float64{}, etcd: map[string]float64{}}
	for _, m := range []requests{r, o} {
		for k, v := range m.api {
			sum.api[k] += v
		}
		for k, v := range m.etcd {
			sum.etcd[k] += v
		}
	}
	return sum
}

// deleteFleet deletes the fleet's nodes, their Leases and their events.
func deleteFleet(tb testing.TB, prefix string, n int) {
	for i := range n {
		deleteNode(tb, prefix+strconv.Itoa(i))
	}
	tb.Logf("deleted %d nodes %s*", n, prefix)
}
