package devicepool_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// provider models a provider that publishes its node's devices while the
// scheduler allocates them to claims, the backend starts and ends their
// pods, and the provider restarts. published is the pool as the API
// server has it; claims are the devices that claims' allocations name,
// each with whether the backend runs its pod.
type provider struct {
	published []devicepool.Device
	claims    map[string]bool
	listed    []string // the groups the last reply with devices listed
}

func (p *provider) init(*rapid.T) { p.claims = map[string]bool{} }

// pool is the pool as a provider hands it to Apply (rule pool-input): the
// published devices and those claims hold, marked, sorted.
func (p *provider) pool() []devicepool.Device {
	pool := slices.Clone(p.published)
	for i := range pool {
		running, held := p.claims[pool[i].Name]
		pool[i].Held, pool[i].Running = held, running
	}
	for _, name := range slices.Sorted(maps.Keys(p.claims)) {
		if !slices.ContainsFunc(pool, func(d devicepool.Device) bool { return d.Name == name }) {
			pool = append(pool, devicepool.Device{Name: name, Held: true, Running: p.claims[name]})
		}
	}
	slices.SortFunc(pool, devicepool.Compare)
	return pool
}

// Ping: the plugin answers, the provider publishes the pool after it;
// the same ping again changes nothing and gives the same list back.
func (p *provider) Ping(t *rapid.T) {
	var patch *pingstatus.NodePatch
	if rapid.IntRange(0, 2).Draw(t, "parsed") == 0 {
		parsed, _ := pingstatus.Parse(gen.ReplyBody().Draw(t, "body"), pingstatus.Options{})
		patch = &parsed
	} else {
		patch = devicePatchGen().Draw(t, "patch")
	}
	ping := nodeapply.Ping{Reply: patch}
	res := devicepool.Apply(p.pool(), ping, pingstatus.Options{})
	again := devicepool.Apply(res.Devices, ping, pingstatus.Options{})
	if len(again.Changes) != 0 || len(again.Devices) != len(res.Devices) || len(res.Devices) > 0 && &again.Devices[0] != &res.Devices[0] {
		t.Fatalf("a repeated ping changes %v", again.Changes)
	}
	p.published = slices.Clone(res.Devices)
	for i := range p.published { // the API server has no claims in a slice
		p.published[i].Held, p.published[i].Running = false, false
	}
	if checked, _ := (pingstatus.Options{}).Check(patch); checked.ReplaceDevices {
		p.listed = p.listed[:0]
		for _, g := range checked.Devices {
			p.listed = append(p.listed, g.Name)
		}
	}
}

// Claim: the scheduler allocates a published device no claim holds, for
// a pod the backend has not started.
func (p *provider) Claim(t *rapid.T) {
	var free []string
	for _, d := range p.published {
		if _, held := p.claims[d.Name]; !held {
			free = append(free, d.Name)
		}
	}
	if len(free) == 0 {
		t.Skip("no free device")
	}
	p.claims[rapid.SampledFrom(free).Draw(t, "claim")] = false
}

// PodStarts: the backend runs a claim's pod.
func (p *provider) PodStarts(t *rapid.T) {
	if len(p.claims) == 0 {
		t.Skip("no claim")
	}
	p.claims[rapid.SampledFrom(slices.Sorted(maps.Keys(p.claims))).Draw(t, "starts")] = true
}

// PodEnds: a claim's pod ends and its allocation goes.
func (p *provider) PodEnds(t *rapid.T) {
	if len(p.claims) == 0 {
		t.Skip("no claim")
	}
	delete(p.claims, rapid.SampledFrom(slices.Sorted(maps.Keys(p.claims))).Draw(t, "ends"))
}

// ProviderRestarts: the provider forgets everything and reads the pool
// back from the API server, sorted as Compare says.
func (p *provider) ProviderRestarts(t *rapid.T) {
	b, err := json.Marshal(p.published)
	if err != nil {
		t.Fatal(err)
	}
	var back []devicepool.Device
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !devicepool.Equal(back, p.published) {
		t.Fatalf("the pool read back is not the one published: %v, was %v", names(back), names(p.published))
	}
	slices.SortFunc(back, devicepool.Compare)
	p.published = back
}

// Check: the published pool is sorted, each name once and valid, and
// every device a claim holds is published while the last reply with
// devices listed its group.
func (p *provider) Check(t *rapid.T) {
	for i, d := range p.published {
		if _, _, ok := kuberules.SplitDeviceName(d.Name); !ok || i > 0 && devicepool.Compare(p.published[i-1], d) >= 0 {
			t.Fatalf("published pool not sorted, each name once and valid: %v", names(p.published))
		}
	}
	for name := range p.claims {
		g, _, _ := kuberules.SplitDeviceName(name)
		if slices.Contains(p.listed, g) && !slices.ContainsFunc(p.published, func(d devicepool.Device) bool { return d.Name == name }) {
			t.Fatalf("%s is held and its group %s listed, but it is not published: %v", name, g, names(p.published))
		}
	}
}

func TestPropertyStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var p provider
		p.init(t)
		t.Repeat(rapid.StateMachineActions(&p))
	})
}
