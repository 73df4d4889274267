package partsfleet

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pingnode/pingnode/pingstatus"
)

// machines reads the free cpus of each generated part back from its
// resources (a full machine sends none, and FullKey), checking what each
// says against config.
func machines(t *testing.T, parts []pingstatus.PartResponse, config Config) map[string]int {
	t.Helper()
	free := map[string]int{}
	for _, p := range parts {
		if errs := validation.IsDNS1123Label(p.Name); len(errs) > 0 {
			t.Errorf("name %q: %v", p.Name, errs)
		}
		if _, ok := free[p.Name]; ok {
			t.Errorf("name %q repeated", p.Name)
		}
		if p.Taints == nil {
			t.Fatalf("%s sends no taints list: a full taint would stay once it is free again", p.Name)
		}
		full := len(p.Taints) == 1 && p.Taints[0].Key == FullKey
		switch {
		case p.Resources == nil && full:
			free[p.Name] = 0
		case p.Resources == nil || full || len(p.Taints) > 0:
			t.Fatalf("%s: resources %v with taints %v", p.Name, p.Resources, p.Taints)
		default:
			cpus, err := strconv.Atoi(p.Resources.CPU)
			if err != nil || cpus < 1 || cpus > config.CPUs {
				t.Errorf("%s: %q free cpus of %d", p.Name, p.Resources.CPU, config.CPUs)
			}
			if want := fmt.Sprintf("%dMi", config.MemoryMi*int64(cpus)/int64(config.CPUs)); p.Resources.Memory != want {
				t.Errorf("%s: memory %s for %d free cpus, want %s", p.Name, p.Resources.Memory, cpus, want)
			}
			free[p.Name] = cpus
		}
	}
	return free
}

// replyOf is a ping reply that serves parts as its nodes, as the sample
// plugin serves them: with its whole (empty) lists of taints and labels,
// and no sum of resources beside them.
func replyOf(parts []pingstatus.PartResponse) pingstatus.PingResponse {
	return pingstatus.PingResponse{
		Status:       "ok",
		NodeResponse: pingstatus.NodeResponse{Taints: []pingstatus.TaintResponse{}, Labels: map[string]string{}},
		Nodes:        append([]pingstatus.PartResponse{}, parts...),
	}
}

// TestFleet: a generated fleet has its machines, named cn001 and on,
// uniquely and validly; every reply is one the provider takes without a
// warning; between replies some machines change and others do not, free
// cpus staying from 0 to the machine's; and a seed gives the same replies
// every time.
func TestFleet(t *testing.T) {
	config := Config{Machines: 300, CPUs: 48, MemoryMi: 192000, Churn: 0.05, Seed: 7}
	fleet, again := New(config), New(config)
	parts := fleet.Parts()
	if len(parts) != 300 || parts[0].Name != "cn001" || parts[299].Name != "cn300" {
		t.Fatalf("%d parts, from %s to %s; want 300, cn001 to cn300", len(parts), parts[0].Name, parts[len(parts)-1].Name)
	}
	if diff := cmp.Diff(parts, fleet.Next()); diff != "" { // the fleet as made; it moves after the reply
		t.Fatalf("the first reply is not the fleet as made (-made +reply):\n%s", diff)
	}
	again.Next()
	before, full := machines(t, parts, config), 0
	for reply := range 50 {
		parts := fleet.Next()
		if diff := cmp.Diff(parts, again.Next()); diff != "" {
			t.Fatalf("reply %d differs with the same seed (-first +second):\n%s", reply, diff)
		}
		if problems := replyOf(parts).Validate(pingstatus.Options{}); len(problems) != 0 {
			t.Fatalf("reply %d: %v", reply, problems)
		}
		after, changed := machines(t, parts, config), 0
		for name, free := range after {
			if free != before[name] {
				changed++
			}
			if free == 0 {
				full++
			}
		}
		if len(after) != 300 || changed == 0 || changed > 60 {
			t.Fatalf("reply %d: %d machines, %d changed; want 300, some of them and not most (churn 0.05)", reply, len(after), changed)
		}
		before = after
	}
	if full == 0 {
		t.Error("no machine was ever full: the full taint is not exercised")
	}
	for i, free := range fleet.free {
		if free < 0 || free > config.CPUs {
			t.Errorf("machine %d: %d free cpus of %d", i, free, config.CPUs)
		}
	}
	if other := New(Config{Machines: 300, CPUs: 48, MemoryMi: 192000, Churn: 0.05, Seed: 8}); cmp.Diff(New(config).Parts(), other.Parts()) == "" {
		t.Error("seeds 7 and 8 give the same fleet")
	}
}

// TestFleetChurnBounds: with churn 0 no machine ever changes, and with
// churn 1 every machine changes at every reply, within its cpus.
func TestFleetChurnBounds(t *testing.T) {
	for _, churn := range []float64{0, 1} {
		config := Config{Machines: 50, CPUs: 4, MemoryMi: 16000, Churn: churn, Seed: 1}
		fleet := New(config)
		before := machines(t, fleet.Next(), config) // the fleet as made; it moves after the reply
		for range 20 {
			after := machines(t, fleet.Next(), config)
			for name, free := range after {
				if changed := free != before[name]; changed != (churn == 1) {
					t.Fatalf("churn %v: %s changed %v (%d to %d free cpus)", churn, name, changed, before[name], free)
				}
			}
			before = after
		}
	}
}

// TestFreeze: after Freeze, a fleet whose every machine changed at every
// reply (churn 1) changes no more: Next returns the parts of the last
// Next before Freeze again and again, as Parts does, and a Freeze among
// concurrent replies (run with -race) leaves a fleet that stays as it is.
func TestFreeze(t *testing.T) {
	config := Config{Machines: 50, CPUs: 4, MemoryMi: 16000, Churn: 1, Seed: 5}
	fleet := New(config)
	var last []pingstatus.PartResponse
	for range 5 {
		last = fleet.Next()
	}
	if cmp.Diff(last, fleet.Next()) == "" {
		t.Fatal("with churn 1, Next changed nothing before Freeze: the test shows nothing")
	}
	last = fleet.Parts() // the fleet just before Freeze
	fleet.Freeze()
	for reply := range 20 {
		if diff := cmp.Diff(last, fleet.Next()); diff != "" {
			t.Fatalf("reply %d after Freeze differs from the fleet before it (-before +after):\n%s", reply, diff)
		}
	}
	if diff := cmp.Diff(last, fleet.Parts()); diff != "" {
		t.Errorf("Parts after Freeze (-before +after):\n%s", diff)
	}
	fleet.Freeze() // again: nothing changes
	if diff := cmp.Diff(last, fleet.Next()); diff != "" {
		t.Errorf("Next after a second Freeze (-before +after):\n%s", diff)
	}

	concurrent := New(config)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				concurrent.Next()
			}
		})
	}
	wg.Go(concurrent.Freeze)
	wg.Wait()
	frozen := concurrent.Parts()
	for reply := range 5 {
		if diff := cmp.Diff(frozen, concurrent.Next()); diff != "" {
			t.Fatalf("reply %d after a concurrent Freeze changed the fleet (-frozen +after):\n%s", reply, diff)
		}
	}
}
