package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/pingstatus"
)

// scaleFleet is the sample plugin's -parts-generate N (its defaults: 48
// cpus and 192000Mi a machine, churn 0.02, seed 1; examples/internal/partsfleet)
// served as a plugin's replies.
type scaleFleet struct{ *partsfleet.Fleet }

func newScaleFleet(n int, churn float64) scaleFleet {
	return scaleFleet{partsfleet.New(partsfleet.Config{Machines: n, CPUs: 48, MemoryMi: 192000, Churn: churn, Seed: 1})}
}

func (f scaleFleet) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	_ = json.NewEncoder(w).Encode(pingstatus.PingResponse{Status: "ok", Nodes: append([]pingstatus.PartResponse{}, f.Next()...)})
}

// freeze stops the churn, and returns the parts as every reply after
// describes them.
func (f scaleFleet) freeze() []pingstatus.PartResponse {
	f.Freeze()
	return f.Parts()
}

// partsCost is what one provider of parts was measured to cost, per node.
type partsCost struct {
	goroutines, heapMB, rssMB           float64 // above a provider of no part
	cpuSeconds, nodeWrites, leaseWrites float64 // per node-hour
	statusWrites, objectWrites          float64 // per node-hour, as the provider counts them (pingnode_node_writes_total)
	current                             float64 // the share of nodes current two intervals after the churn stopped
	// ready is the time from the first ping to every node Ready, and
	// registration the requests the API server counted by then, per node.
	ready        time.Duration
	registration float64
}

func (c partsCost) String() string {
	s := fmt.Sprintf("goroutines %.1f, heap %.3f MB, RSS %.3f MB, cpu %.2f s/node-h, node writes %.1f/node-h (the provider's: status %.1f, object %.1f), Lease writes %.1f/node-h, current %.1f%%",
		c.goroutines, c.heapMB, c.rssMB, c.cpuSeconds, c.nodeWrites, c.statusWrites, c.objectWrites, c.leaseWrites, 100*c.current)
	if c.ready > 0 { // measured (TestPartsScale)
		s += fmt.Sprintf("; every node Ready %s after the first ping, at %.1f requests a node", c.ready, c.registration)
	}
	return s
}

// TestPartsScale measures what a part's node costs: a provider process
// of N parts ($PINGNODE_PARTS_N, 200 by default) from one plugin, pinged
// every 5 s, whose machines churn as the sample plugin's -parts-generate
// N -parts-churn 0.02 ($PINGNODE_PARTS_CHURN: 0 is a steady backend),
// over a window ($PINGNODE_PARTS_WINDOW, 1m). It
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
	n, window := scaleSettings(t, "PINGNODE_PARTS", 200, 1)
	churn := 0.02
	if s := os.Getenv("PINGNODE_PARTS_CHURN"); s != "" {
		var err error
		if churn, err = strconv.ParseFloat(s, 64); err != nil || churn < 0 || churn > 1 {
			t.Fatalf("PINGNODE_PARTS_CHURN=%q: want a chance, 0 to 1", s)
		}
	}
	measureVersions(t, os.Getenv("PINGNODE_PARTS_BEFORE"), fmt.Sprintf("%d parts, churn %g", n, churn), func(t *testing.T, version, bin string, env []string) partsCost {
		return measureParts(t, bin, env, "vk-scale-"+version+"-{part}", n, churn, window)
	})
}

// scaleSettings are a scale test's number of nodes, $prefix_N (def when
// not set; no fewer than least), and window, $prefix_WINDOW (a minute
// when not set).
func scaleSettings(t *testing.T, prefix string, def, least int) (n int, window time.Duration) {
	n, window = def, time.Minute
	if s := os.Getenv(prefix + "_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < least {
			t.Fatalf("%s_N=%q: want a number of nodes, %d or more", prefix, s, least)
		}
	}
	if s := os.Getenv(prefix + "_WINDOW"); s != "" {
		var err error
		if window, err = time.ParseDuration(s); err != nil {
			t.Fatalf("%s_WINDOW=%q: %v", prefix, s, err)
		}
	}
	return n, window
}

// measureVersions measures with measure the provider as built by this
// test (or, if $PINGNODE_SCALE_AFTER names one, a provider binary built
// from this version, so that a process's own figures compare with
// before's), and first, if before is not "", the provider binary it
// names, built from another version; then it logs the ratios,
// after/before.
func measureVersions(t *testing.T, before, what string, measure func(t *testing.T, version, bin string, env []string) partsCost) {
	type version struct {
		name, bin string
		env       []string
	}
	versions := []version{{"after", os.Args[0], append(os.Environ(), providerProcessEnv+"=1")}}
	if after := os.Getenv("PINGNODE_SCALE_AFTER"); after != "" {
		versions = []version{{"after", after, os.Environ()}}
	}
	if before != "" {
		versions = append([]version{{"before", before, os.Environ()}}, versions...)
	}
	costs := map[string]partsCost{}
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			costs[v.name] = measure(t, v.name, v.bin, v.env)
			t.Logf("%s, %s: %s", v.name, what, costs[v.name])
		})
	}
	if before, ok := costs["before"]; ok {
		after := costs["after"]
		ratio := func(a, b float64) string {
			if b == 0 {
				return "-" // none before: a window without that write
			}
			return fmt.Sprintf("%.2f", a/b)
		}
		t.Logf("after/before, %s: goroutines %s, heap %s, RSS %s, cpu %s, node writes %s, Lease writes %s; time to every node Ready %s, its requests %s",
			what, ratio(after.goroutines, before.goroutines), ratio(after.heapMB, before.heapMB), ratio(after.rssMB, before.rssMB),
			ratio(after.cpuSeconds, before.cpuSeconds), ratio(after.nodeWrites, before.nodeWrites), ratio(after.leaseWrites, before.leaseWrites),
			ratio(after.ready.Seconds(), before.ready.Seconds()), ratio(after.registration, before.registration))
	}
}

// measureParts runs bin as a provider of no part, then of n parts, and
// measures the second against the first.
func measureParts(t *testing.T, bin string, env []string, template string, n int, churn float64, window time.Duration) partsCost {
	const interval = 5 * time.Second
	owner := vnode.DefaultOwner(template)
	// start starts bin with fleet as its plugin, and waits until it has
	// pinged it pings times (a first ping registers every part's node,
	// one after the other, before the next).
	start := func(fleet scaleFleet, pings float64) (*providerProcess, string) {
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
	s0 := sampleProcess(t, base, baseURL)
	base.kill(t)

	fleet := newScaleFleet(n, churn)
	t.Cleanup(func() { deleteParts(t, owner, template, fleet) })
	before := mustReadRequests(t)
	p, url := start(fleet, 1)
	began := time.Now()
	// Every 2 s, from the API server's watch cache (resourceVersion 0):
	// a list of 5,000 nodes every 50 ms, from etcd, cost the API server
	// more than the provider did, and its writes were refused (429).
	withinEvery(t, 15*time.Minute, 2*time.Second, fmt.Sprintf("%d parts' nodes Ready", n), func(ctx context.Context) (bool, string) {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: vnode.OwnerLabel + "=" + owner, ResourceVersion: "0"})
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
	ready := time.Since(began).Round(time.Second)
	registration := mustReadRequests(t).since(before)
	t.Logf("%d parts' nodes Ready %s after the first ping; the API server counted, by then:%s", n, ready, registration)
	// The last registrations' first writes, and the controller manager's
	// (its TTL controller annotates every node as the cluster grows).
	time.Sleep(30 * time.Second)
	cost, d := costOver(t, p, url, s0, n, n, window)
	free := fleet.freeze()
	time.Sleep(2 * interval)
	cost.current = currentShare(t, template, free)
	cost.ready, cost.registration = ready, registration.total()/float64(n)
	t.Logf("counted in %s:%s", window, d)
	if dir := os.Getenv("PINGNODE_PARTS_LOGS"); dir != "" { // the provider's log, kept
		if log, err := os.ReadFile(p.log); err == nil {
			_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(template, "{part}", "parts")+".log"), log, 0o644)
		}
	}
	return cost
}

// processSample is what a provider process had used when it was
// sampled: its /metrics, its resident set (MB) and its CPU seconds.
type processSample struct {
	m        map[string]float64
	rss, cpu float64
}

func sampleProcess(t *testing.T, p *providerProcess, url string) processSample {
	t.Helper()
	m, err := readProcessMetrics(url)
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := p.cpuSeconds()
	if err != nil {
		t.Fatal(err)
	}
	return processSample{m: m, rss: rssMB(t, p), cpu: cpu}
}

// costOver measures p, a provider of n nodes whose metrics are at url,
// over window: what each node costs, in memory and goroutines above
// base, a sample of a provider of above fewer nodes, and per node-hour
// in CPU and writes; and what the API server counted.
func costOver(t *testing.T, p *providerProcess, url string, base processSample, above, n int, window time.Duration) (partsCost, requests) {
	t.Helper()
	before := mustReadRequests(t)
	start := sampleProcess(t, p, url)
	time.Sleep(window)
	d := mustReadRequests(t).since(before)
	end := sampleProcess(t, p, url)
	nodeHours := float64(n) * float64(window) / float64(time.Hour)
	writes := func(s processSample, kinds ...string) (sum float64) {
		for _, k := range kinds {
			sum += s.m["pingnode_node_writes_total/"+k]
		}
		return sum
	}
	return partsCost{
		goroutines:   (end.m["go_goroutines"] - base.m["go_goroutines"]) / float64(above),
		heapMB:       (end.m["go_memstats_heap_inuse_bytes"] - base.m["go_memstats_heap_inuse_bytes"]) / float64(above) / 1e6,
		rssMB:        (end.rss - base.rss) / float64(above),
		cpuSeconds:   (end.cpu - start.cpu) / nodeHours,
		nodeWrites:   d.nodeWrites() / nodeHours,
		leaseWrites:  d.leaseWrites() / nodeHours,
		statusWrites: (writes(end, "status", "report") - writes(start, "status", "report")) / nodeHours,
		objectWrites: (writes(end, "object") - writes(start, "object")) / nodeHours,
	}, d
}

// currentShare is the share of the parts' nodes whose figures and taint
// are what the fleet's parts say (a full machine's taint, or its cpu),
// all read at once.
func currentShare(t *testing.T, template string, parts []pingstatus.PartResponse) float64 {
	list, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: vnode.OwnerLabel + "=" + vnode.DefaultOwner(template)})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]*corev1.Node{}
	for i := range list.Items {
		nodes[list.Items[i].Name] = &list.Items[i]
	}
	names := vnode.Parts{Template: template}
	current := 0
	for _, part := range parts {
		node := nodes[names.NodeName(part.Name)]
		if node == nil {
			continue
		}
		tainted := false
		for _, taint := range node.Spec.Taints {
			tainted = tainted || taint.Key == partsfleet.FullKey
		}
		full := part.Resources == nil
		cpu := node.Status.Allocatable[corev1.ResourceCPU]
		if tainted == full && (full || cpu.String() == part.Resources.CPU) {
			current++
		}
	}
	return float64(current) / float64(len(parts))
}

// deleteParts deletes the nodes of owner and the Leases of the fleet's
// parts.
func deleteParts(t *testing.T, owner, template string, fleet scaleFleet) {
	ctx := context.Background()
	if err := client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: vnode.OwnerLabel + "=" + owner}); err != nil {
		t.Errorf("deleting the parts' nodes: %v", err)
	}
	names := vnode.Parts{Template: template}
	for _, part := range fleet.Parts() {
		_ = client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, names.NodeName(part.Name), metav1.DeleteOptions{})
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
