// Package partsfleet generates a backend of many parts: a fleet of
// identical machines whose free cpus change as jobs start and end on them,
// each machine a part of a ping reply. The sample plugin serves it with
// -parts-generate, and the provider's fleet benchmark (TestPartsScale in
// examples/virtualkubelet) pings it, so that both load a provider with
// the same fleet. [Config] says what the fleet is, [New] makes it, and
// [Fleet.Next] moves it on by one reply; [Fleet.Freeze] stops its churn,
// for a benchmark that waits for the nodes to catch up.
package partsfleet

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/pingnode/pingnode/pingstatus"
)

// FullKey is the taint a generated machine with no free cpu has: a zero
// cpu would be refused (it would drain the node), and the tool for "take
// no pods" is a taint. The machine's resources are then not sent, and its
// node keeps its last figures, which the taint makes moot.
const FullKey = "plugin.example.com/full"

// Config is what a generated fleet is: how many identical machines, what
// each has, how fast its jobs come and go, and the seed that makes a run
// reproducible.
type Config struct {
	// Machines is how many machines, named cn001, cn002 and so on: the
	// index zero-padded to the width of Machines, at least 3 digits.
	Machines int
	// CPUs is the cpus of each machine.
	CPUs int
	// MemoryMi is the memory of each machine in MiB (Slurm's RealMemory);
	// a machine's free memory is this in proportion of its free cpus.
	MemoryMi int64
	// Churn is the chance, at each reply, that a machine starts or ends a
	// job: 0 never, 1 at every reply.
	Churn float64
	// Seed seeds the random source: the same seed gives the same fleet and
	// the same replies in the same order.
	Seed uint64
}

// The bounds of a machine, so that its free memory (MemoryMi times its
// free cpus) is always counted in an int64: a [Config] within them, with
// CPUs 1 or more, is one [New] takes.
const (
	MaxCPUs     = 1 << 16
	MaxMemoryMi = 1 << 40
)

// Fleet is a generated fleet of identical machines whose free cpus change
// as jobs start and end on them: a backend of many parts, for a benchmark
// of a provider that serves parts. Its methods are safe for concurrent
// use.
type Fleet struct {
	config Config
	names  []string

	mu   sync.Mutex
	rng  *rand.Rand
	free []int // the free cpus of each machine, 0 to config.CPUs
	// frozen is set by Freeze: the churn has stopped for good.
	frozen bool
}

// New returns the fleet that c describes, each machine with a random
// number of free cpus: some idle, some full, most in between. c is as the
// sample plugin's flags check it: Machines 0 or more, CPUs from 1 to
// [MaxCPUs], MemoryMi from 0 to [MaxMemoryMi].
func New(c Config) *Fleet {
	f := &Fleet{
		config: c,
		names:  make([]string, c.Machines),
		rng:    rand.New(rand.NewPCG(c.Seed, 0)),
		free:   make([]int, c.Machines),
	}
	width := max(3, len(strconv.Itoa(c.Machines)))
	for i := range f.names {
		f.names[i] = fmt.Sprintf("cn%0*d", width, i+1)
		f.free[i] = f.rng.IntN(c.CPUs + 1)
	}
	return f
}

// Next moves the fleet on by one reply, each machine independently with
// the chance Churn starting a job (which takes from 1 to all its free
// cpus) or ending one (which gives back from 1 to all it uses), and
// returns the parts that describe the fleet then. After [Fleet.Freeze]
// it moves nothing and returns the parts of the fleet as it is.
func (f *Fleet) Next() []pingstatus.PartResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		return f.parts()
	}
	for i, free := range f.free {
		if f.rng.Float64() >= f.config.Churn {
			continue
		}
		used := f.config.CPUs - free
		if used == 0 || free > 0 && f.rng.IntN(2) == 0 {
			f.free[i] -= 1 + f.rng.IntN(free) // a job starts
		} else {
			f.free[i] += 1 + f.rng.IntN(used) // a job ends
		}
	}
	return f.parts()
}

// Parts returns the parts that describe the fleet now, without moving it
// on.
func (f *Fleet) Parts() []pingstatus.PartResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts()
}

// Freeze stops the churn for good, as if Churn were 0 from then on: no
// job starts or ends any more, so that every reply after it, of
// [Fleet.Next] or [Fleet.Parts], describes the fleet as it is, the same
// parts that the last Next before Freeze returned. A benchmark freezes
// the fleet to see how soon the nodes catch up with it, and Parts after
// Freeze is what they should then show. Freezing a frozen fleet changes
// nothing.
func (f *Fleet) Freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = true
}

// parts is Parts, with f.mu held. Each part sends its whole list of
// taints, so that a machine that has cpus free again loses FullKey.
func (f *Fleet) parts() []pingstatus.PartResponse {
	parts := make([]pingstatus.PartResponse, len(f.free))
	for i, free := range f.free {
		parts[i] = pingstatus.PartResponse{Name: f.names[i], NodeResponse: pingstatus.NodeResponse{Taints: pingstatus.TaintList()}}
		if free == 0 {
			parts[i].Taints = pingstatus.TaintList(pingstatus.TaintResponse{Key: FullKey, Value: "true", Effect: "NoSchedule"})
			continue
		}
		parts[i].Resources = &pingstatus.ResourcesResponse{
			CPU:    strconv.Itoa(free),
			Memory: strconv.FormatInt(f.config.MemoryMi*int64(free)/int64(f.config.CPUs), 10) + "Mi",
		}
	}
	return parts
}
