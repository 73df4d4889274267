package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scaleFullKey is the taint of a generated machine with no free cpu, as
// the sample plugin's generator has it (examples/plugin, FullKey).
const scaleFullKey = "plugin.example.com/full"

// scaleFleet is a minimal backend of many parts, as the sample plugin's
// -parts-generate N -parts-churn 0.02 serves them (examples/plugin,
// Fleet; a package main, which a test cannot import): N machines of 48
// cpus, cn0001 and on, each of which, at each reply, starts or ends a job
// with the chance churn; a full machine has the taint scaleFullKey and
// sends no figures.
type scaleFleet struct {
	mu    sync.Mutex
	rng   *rand.Rand
	free  []int
	churn float64
}

const scaleCPUs = 48

func newScaleFleet(n int, churn float64) *scaleFleet {
	f := &scaleFleet{rng: rand.New(rand.NewPCG(1, 0)), free: make([]int, n), churn: churn}
	for i := range f.free {
		f.free[i] = f.rng.IntN(scaleCPUs + 1)
	}
	return f
}

func scalePart(i int) string { return fmt.Sprintf("cn%04d", i+1) }

func (f *scaleFleet) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	nodes := make([]map[string]any, len(f.free))
	for i, free := range f.free {
		if f.rng.Float64() < f.churn {
			if used := scaleCPUs - free; used == 0 || free > 0 && f.rng.IntN(2) == 0 {
				free -= 1 + f.rng.IntN(free)
			} else {
				free += 1 + f.rng.IntN(used)
			}
			f.free[i] = free
		}
		part := map[string]any{"name": scalePart(i), "taints": []any{}}
		if free == 0 {
			part["taints"] = []any{map[string]string{"key": scaleFullKey, "value": "true", "effect": "NoSchedule"}}
		} else {
			part["resources"] = map[string]string{"cpu": strconv.Itoa(free), "memory": fmt.Sprintf("%dMi", 4000*free)}
		}
		nodes[i] = part
	}
	f.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "nodes": nodes})
}

// freeze stops the churn, and returns the free cpus of each machine.
func (f *scaleFleet) freeze() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.churn = 0
	return append([]int(nil), f.free...)
}

// partsCost is what one provider of parts was measured to cost, per node.
type partsCost struct {
	goroutines, heapMB, rssMB           float64 // above a provider of no part
	cpuSeconds, nodeWrites, leaseWrites float64 // per node-hour
	statusWrites, objectWrites          float64 // per node-hour, as the provider counts them (pingnode_node_writes_total)
	current                             float64 // the share of nodes current two intervals after the churn stopped
}

func (c partsCost) String() string {
	return fmt.Sprintf("goroutines %.1f, heap %.3f MB, RSS %.3f MB, cpu %.2f s/node-h, node writes %.1f/node-h (the provider's: status %.1f, object %.1f), Lease writes %.1f/node-h, current %.1f%%",
		c.goroutines, c.heapMB, c.rssMB, c.cpuSeconds, c.nodeWrites, c.statusWrites, c.objectWrites, c.leaseWrites, 100*c.current)
}

// TestPartsScale measures what a part's node costs: a provider process
// of N parts ($PINGNODE_PARTS_N, 200 by default) from one plugin, pinged
// every 5 s, whose machines churn as the sample plugin's -parts-generate
// N -parts-churn 0.02, over a window ($PINGNODE_PARTS_WINDOW, 1m). It
// reports per node the goroutines, heap (go_goroutines and
// go_memstats_heap_inuse_bytes of the provider's /metrics) and RSS above
// a provider of no part, the provider's CPU seconds, the node and Lease
// writes the API server counted (apiserver_request_total) per node-hour,
// and the share of nodes current two intervals after the churn stops.
// $PINGNODE_PARTS_LOGS, a directory, keeps the provider's log there.
// With $PINGNODE_PARTS_BEFORE, the path of a provider built from another
// version, it measures that one first, and the ratios.
//
//	PINGNODE_PARTS_N=1000 PINGNODE_PARTS_BEFORE=/tmp/vk-head go test -run TestPartsScale -v -timeout 60m .
func TestPartsScale(t *testing.T) {
	needsControlPlane(t)
	n, window := 200, time.Minute
	if s := os.Getenv("PINGNODE_PARTS_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("PINGNODE_PARTS_N=%q: want a number of parts", s)
		}
	}
	if s := os.Getenv("PINGNODE_PARTS_WINDOW"); s != "" {
		var err error
		if window, err = time.ParseDuration(s); err != nil {
			t.Fatalf("PINGNODE_PARTS_WINDOW=%q: %v", s, err)
		}
	}
	type version struct {
		name, bin string
		env       []string
	}
	versions := []version{{"after", os.Args[0], append(os.Environ(), providerProcessEnv+"=1")}}
	if bin := os.Getenv("PINGNODE_PARTS_BEFORE"); bin != "" {
		versions = append([]version{{"before", bin, os.Environ()}}, versions...)
	}
	costs := map[string]partsCost{}
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			costs[v.name] = measureParts(t, v.bin, v.env, "vk-scale-"+v.name+"-{part}", n, window)
			t.Logf("%s, %d parts: %s", v.name, n, costs[v.name])
		})
	}
	if before, ok := costs["before"]; ok {
		after := costs["after"]
		t.Logf("after/before, %d parts: goroutines %.2f, heap %.2f, RSS %.2f, cpu %.2f, node writes %.2f, Lease writes %.2f",
			n, after.goroutines/before.goroutines, after.heapMB/before.heapMB, after.rssMB/before.rssMB,
			after.cpuSeconds/before.cpuSeconds, after.nodeWrites/before.nodeWrites, after.leaseWrites/before.leaseWrites)
	}
}

// measureParts runs bin as a provider of no part, then of n parts, and
// measures the second against the first.
func measureParts(t *testing.T, bin string, env []string, template string, n int, window time.Duration) partsCost {
	const interval = 5 * time.Second
	owner := DefaultOwner(template)
	// start starts bin with fleet as its plugin, and waits until it has
	// pinged it pings times (a first ping registers every part's node,
	// one after the other, before the next).
	start := func(fleet *scaleFleet, pings float64) (*providerProcess, string) {
		t.Helper()
		server := httptest.NewServer(fleet)
		t.Cleanup(server.Close)
		addr := freeAddr(t)
		args := []string{"-parts", "-node", template, "-plugin", server.URL + "/status", "-metrics-addr", addr}
		a := accessOfArgs(t, args)
		p := runBinary(t, bin, env, grant(t, owner, a).kubeconfig(t, envHost), args...)
		url := "http://" + addr + "/metrics"
		within(t, time.Minute, "the provider's first pings", func(context.Context) (bool, string) {
			m, err := readProcessMetrics(url)
			return err == nil && m["pingnode_pings_total"] >= pings, fmt.Sprint(err)
		})
		return p, url
	}
	// A provider of no part: the baseline.
	base, baseURL := start(newScaleFleet(0, 0), 2)
	time.Sleep(interval)
	m0, err := readProcessMetrics(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	rss0 := rssMB(t, base)
	base.kill(t)

	t.Cleanup(func() { deleteParts(t, owner, n, template) })
	fleet := newScaleFleet(n, 0.02)
	p, url := start(fleet, 1)
	began := time.Now()
	within(t, 15*time.Minute, fmt.Sprintf("%d parts' nodes Ready", n), func(ctx context.Context) (bool, string) {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: OwnerLabel + "=" + owner})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for i := range list.Items {
			if ok, _ := conditionIs(&list.Items[i], corev1.NodeReady, corev1.ConditionTrue); ok {
				ready++
			}
		}
		return ready == n, fmt.Sprintf("%d of %d", ready, n)
	})
	t.Logf("%d parts' nodes Ready %s after the start", n, time.Since(began).Round(time.Second))
	// The last registrations' first writes, and the controller manager's
	// (its TTL controller annotates every node as the cluster grows).
	time.Sleep(30 * time.Second)
	before := mustReadRequests(t)
	mBefore, err := readProcessMetrics(url)
	if err != nil {
		t.Fatal(err)
	}
	cpu0, err := p.cpuSeconds()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(window)
	d := mustReadRequests(t).since(before)
	cpu1, err := p.cpuSeconds()
	if err != nil {
		t.Fatal(err)
	}
	m, err := readProcessMetrics(url)
	if err != nil {
		t.Fatal(err)
	}
	rss := rssMB(t, p)
	free := fleet.freeze()
	time.Sleep(2 * interval)
	nodeHours := float64(n) * float64(window) / float64(time.Hour)
	cost := partsCost{
		goroutines:  (m["go_goroutines"] - m0["go_goroutines"]) / float64(n),
		heapMB:      (m["go_memstats_heap_inuse_bytes"] - m0["go_memstats_heap_inuse_bytes"]) / float64(n) / 1e6,
		rssMB:       (rss - rss0) / float64(n),
		cpuSeconds:  (cpu1 - cpu0) / nodeHours,
		nodeWrites:  d.nodeWrites() / nodeHours,
		leaseWrites: d.leaseWrites() / nodeHours,
		statusWrites: (m["pingnode_node_writes_total/status"] + m["pingnode_node_writes_total/report"] -
			mBefore["pingnode_node_writes_total/status"] - mBefore["pingnode_node_writes_total/report"]) / nodeHours,
		objectWrites: (m["pingnode_node_writes_total/object"] - mBefore["pingnode_node_writes_total/object"]) / nodeHours,
		current:      currentShare(t, template, free),
	}
	t.Logf("counted in %s:%s", window, d)
	if dir := os.Getenv("PINGNODE_PARTS_LOGS"); dir != "" { // the provider's log, kept
		if log, err := os.ReadFile(p.log); err == nil {
			_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(template, "{part}", "parts")+".log"), log, 0o644)
		}
	}
	return cost
}

// currentShare is the share of the parts' nodes whose figures and taint
// are what the fleet says, free.
func currentShare(t *testing.T, template string, free []int) float64 {
	parts := Parts{Template: template}
	current := 0
	for i, f := range free {
		node, err := client.CoreV1().Nodes().Get(context.Background(), parts.NodeName(scalePart(i)), metav1.GetOptions{})
		if err != nil {
			continue
		}
		full := false
		for _, taint := range node.Spec.Taints {
			full = full || taint.Key == scaleFullKey
		}
		cpu := node.Status.Allocatable[corev1.ResourceCPU]
		if full == (f == 0) && (f == 0 || cpu.Value() == int64(f)) {
			current++
		}
	}
	return float64(current) / float64(len(free))
}

// deleteParts deletes the nodes of owner and the Leases of the template's
// n parts.
func deleteParts(t *testing.T, owner string, n int, template string) {
	ctx := context.Background()
	if err := client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: OwnerLabel + "=" + owner}); err != nil {
		t.Errorf("deleting the parts' nodes: %v", err)
	}
	parts := Parts{Template: template}
	for i := range n {
		_ = client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, parts.NodeName(scalePart(i)), metav1.DeleteOptions{})
	}
}

// freeAddr is a free address on the loopback.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// readProcessMetrics reads the unlabelled samples of a provider's
// /metrics, and sums each labelled one's.
func readProcessMetrics(url string) (map[string]float64, error) {
	resp, err := http.Get(url) //nolint:noctx // a test's scrape of its own child
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]float64{}
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		name, labels, _ := strings.Cut(name, "{")
		if _, kind, ok := strings.Cut(labels, `kind="`); ok {
			kind, _, _ = strings.Cut(kind, `"`)
			name += "/" + kind
		}
		if i := strings.LastIndex(line, " "); i > 0 {
			value = line[i+1:]
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] += v
		}
	}
	return out, scanner.Err()
}

// rssMB is the resident set of the process, in MB, from /proc.
func rssMB(t *testing.T, p *providerProcess) float64 {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb * 1024 / 1e6
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}
