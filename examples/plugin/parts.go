package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"

	"github.com/pingnode/pingnode/pingstatus"
)

// FullKey is the taint a generated machine with no free cpu has: a zero
// cpu would be refused (it would drain the node), and the tool for "take
// no pods" is a taint. The machine's resources are then not sent, and its
// node keeps its last figures, which the taint makes moot.
const FullKey = "plugin.example.com/full"

// FleetConfig is what a generated fleet is: how many identical machines,
// what each has, how fast its jobs come and go, and the seed that makes a
// run reproducible.
type FleetConfig struct {
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
// free cpus) is always counted in an int64.
const (
	maxMachineCPUs     = 1 << 16
	maxMachineMemoryMi = 1 << 40
)

// Fleet is a generated fleet of identical machines whose free cpus change
// as jobs start and end on them: a backend of many parts, for a benchmark
// of a provider that serves parts. Its methods are safe for concurrent
// use.
type Fleet struct {
	config FleetConfig
	names  []string

	mu   sync.Mutex
	rng  *rand.Rand
	free []int // the free cpus of each machine, 0 to config.CPUs
}

// NewFleet returns the fleet that c describes, each machine with a random
// number of free cpus: some idle, some full, most in between. c is as the
// flags check it: Machines 0 or more, CPUs 1 or more.
func NewFleet(c FleetConfig) *Fleet {
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
// returns the parts that describe the fleet then.
func (f *Fleet) Next() []pingstatus.PartResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
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

// parts is Parts, with f.mu held. Each part sends its whole list of
// taints, so that a machine that has cpus free again loses FullKey.
func (f *Fleet) parts() []pingstatus.PartResponse {
	parts := make([]pingstatus.PartResponse, len(f.free))
	for i, free := range f.free {
		parts[i] = pingstatus.PartResponse{Name: f.names[i], Taints: pingstatus.TaintList()}
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

// readParts reads a -parts file: a JSON array of parts, each an object
// of [pingstatus.PartResponse]'s fields and no other.
func readParts(file string) ([]pingstatus.PartResponse, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var parts []pingstatus.PartResponse
	if err := dec.Decode(&parts); err != nil {
		return nil, err
	}
	if parts == nil {
		return nil, errors.New("want a JSON array of parts, got null")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("more after the array of parts")
	}
	return parts, nil
}

// partsProblems returns what is wrong with the parts of the -parts file
// or of -parts-generate (flag names which), each a line, as the provider
// would judge them with opts.
func partsProblems(flag string, parts []pingstatus.PartResponse, opts pingstatus.Options) []string {
	var problems []string
	for _, w := range (pingstatus.PingResponse{Nodes: pingstatus.PartList(parts...)}).Validate(opts) {
		problems = append(problems, flag+": "+w.String())
	}
	return problems
}

// fleetProblems returns what is wrong with c, a -parts-generate fleet,
// each a line naming its flag: what the flags cannot check one by one,
// as they are read.
func fleetProblems(c FleetConfig) []string {
	var problems []string
	if c.Machines > pingstatus.DefaultMaxParts {
		problems = append(problems, fmt.Sprintf("-parts-generate: at most %d machines, the most parts a provider takes by default, got %d", pingstatus.DefaultMaxParts, c.Machines))
	}
	if c.MemoryMi < int64(c.CPUs) { // so that a free cpu has free memory
		problems = append(problems, fmt.Sprintf("-parts-memory: want at least 1Mi a cpu (%dMi with -parts-cpus %d), got %dMi", c.CPUs, c.CPUs, c.MemoryMi))
	}
	return problems
}
