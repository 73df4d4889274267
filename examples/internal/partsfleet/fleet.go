package partsfleet

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

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
	// a machine's free memory is this in proportion of its free cpus, or
	// in a Slurm fleet this less what its native jobs take (in proportion
	// of their cpus) and what its jobs take ([Fleet.freeMemory]).
	MemoryMi int64
	// Churn is the chance, at each reply, that a machine starts or ends a
	// job: 0 never, 1 at every reply.
	Churn float64
	// Seed seeds the random source: the same seed gives the same fleet and
	// the same replies in the same order.
	Seed uint64
	// Now is the clock that says when a pod's job is created and starts,
	// and whether a job that sleeps has completed; nil is time.Now. A
	// test sets a fixed clock.
	Now func() time.Time
	// Unbounded makes a backend without machines to queue pods on (the
	// sample plugin's one node, or its -parts file): no machine is made,
	// whatever Machines says, and every pod starts at once, its node name,
	// its pin and its cpus not checked.
	Unbounded bool
	// Slurm makes the backend place and keep jobs as Slurm does under
	// interLink's Slurm plugin (the sample plugin's -slurm): a pod's node
	// name chooses nothing, the backend does, unless the pod's sbatch
	// flags pin it to a machine; a job takes its memory as well as its
	// cpus, and ends at its time limit; a second create of a pod is a
	// second job; and job IDs are numbers (see the package's rules).
	Slurm bool
	// MinJobAge is how long after a job ended Slurm forgets it (slurm.conf's
	// MinJobAge, 300 s by default there), from when [JobStatus.Forgotten]
	// reports it: 0 never forgets.
	MinJobAge time.Duration
	// Stuck names the machines that look free and never start anything,
	// as a machine whose daemon is broken: such a machine always replies
	// with every cpu free and runs no native job, and a job placed on it
	// holds its cpus there but stays queued until it is deleted. A name
	// that is no machine's is ignored.
	Stuck []string
}

// MachineName is the name of the machine of index i, from 0: cn001 for
// 0, the index from 1 zero-padded to the width of Machines, at least 3
// digits.
func (c Config) MachineName(i int) string {
	return fmt.Sprintf("cn%0*d", max(3, len(strconv.Itoa(c.Machines))), i+1)
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
// of a provider that serves parts, which runs pods as jobs (see the
// package's rules). Its methods are safe for concurrent use.
type Fleet struct {
	config Config
	names  []string
	byName map[string]int // the index of each machine's name
	now    func() time.Time

	mu     sync.Mutex
	rng    *rand.Rand
	free   []int // the free cpus of each machine, 0 to config.CPUs: less native and running pods
	native []int // the cpus of each machine's native jobs
	// podMemory is the memory, in MiB, that the jobs running or held on
	// each machine take (Job.MemoryMi), counted in a Slurm fleet.
	podMemory []int64
	// queues holds each machine's queued jobs, first come first.
	queues [][]*job
	// waiting is the backend's own queue (Slurm), of the jobs pinned to
	// no machine, first come first.
	waiting []*job
	// jobs holds each pod's job by its UID, the one a status or a delete
	// of the pod is about: its latest, and none once it is deleted.
	jobs map[string]*job
	// all holds every job ever created, first created first: its number
	// less one is its index.
	all []*job
	// timed holds the running jobs that end by themselves (Sleeps),
	// ordered by when each ends, first first.
	timed []*job
	// unknownDeletes counts the deletes of a pod that had no job.
	unknownDeletes int
	// frozen is set by Freeze: the churn has stopped for good.
	frozen bool
	// stuck says which machines are stuck (Config.Stuck), by index.
	stuck []bool
}

// New returns the fleet that c describes, each machine with a random
// number of free cpus: some idle, some full, most in between. c is as the
// sample plugin's flags check it: Machines 0 or more, CPUs from 1 to
// [MaxCPUs], MemoryMi from 0 to [MaxMemoryMi]. With Unbounded it makes
// no machine, and only Now is used.
func New(c Config) *Fleet {
	n := max(0, c.Machines)
	if c.Unbounded {
		n = 0
	}
	f := &Fleet{
		config: c,
		names:  make([]string, n),
		byName: make(map[string]int, n),
		now:    c.Now,
		rng:    rand.New(rand.NewPCG(c.Seed, 0)),
		free:   make([]int, n),
		native: make([]int, n),
		queues: make([][]*job, n),
		jobs:   map[string]*job{},
		stuck:  make([]bool, n),
	}
	f.podMemory = make([]int64, n)
	if f.now == nil {
		f.now = time.Now
	}
	for i := range f.names {
		f.names[i] = c.MachineName(i)
		f.byName[f.names[i]] = i
		f.free[i] = f.rng.IntN(c.CPUs + 1)
		f.native[i] = c.CPUs - f.free[i]
	}
	for _, name := range c.Stuck {
		if i, ok := f.byName[name]; ok {
			f.stuck[i], f.free[i], f.native[i] = true, c.CPUs, 0
		}
	}
	return f
}

// Next returns the parts that describe the fleet now, and then moves it
// on by one reply, as if between pings: each machine independently with
// the chance Churn starts a native job (which takes from 1 to all its
// free cpus) or ends one (which gives back from 1 to all its native jobs
// use); then the queued pods start, in order, while they fit. After
// [Fleet.Freeze] the native jobs stay as they are.
func (f *Fleet) Next() []pingstatus.PartResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	parts := f.parts()
	f.moveOn()
	return parts
}

// NextSum is [Fleet.Next] as one sum, as interLink's Slurm plugin
// replies: the free cpus and memory of the whole fleet (see
// [Fleet.Sum]), and then the fleet moves on by one reply.
func (f *Fleet) NextSum() pingstatus.ResourcesResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	sum := f.sum()
	f.moveOn()
	return sum
}

// moveOn moves the fleet on by one reply, with f.mu held: the native
// jobs move, unless frozen, and then the queued jobs start if they fit.
func (f *Fleet) moveOn() {
	if !f.frozen {
		f.churn() // after the reply: the native jobs move between pings
	}
	f.startQueued(f.now())
}

// churn is the native churn of Next, with f.mu held. A machine that its
// pods fill has no native job to end and no cpu for one to start: it
// stays as it is. In a Slurm fleet a native job that starts takes no
// more cpus than leave its jobs their memory ([Fleet.nativeRoom]), and
// none start when that is none.
func (f *Fleet) churn() {
	for i, free := range f.free {
		if f.rng.Float64() >= f.config.Churn || f.stuck[i] {
			continue
		}
		native := f.native[i]
		if native == 0 && free == 0 {
			continue
		}
		var n int
		if native == 0 || free > 0 && f.rng.IntN(2) == 0 {
			n = min(1+f.rng.IntN(free), f.nativeRoom(i)) // a native job starts
			if n == 0 {
				continue
			}
		} else {
			n = -1 - f.rng.IntN(native) // a native job ends
		}
		f.native[i] += n
		f.free[i] -= n
	}
}

// Parts returns the parts that describe the fleet now, without moving it
// on.
func (f *Fleet) Parts() []pingstatus.PartResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	return f.parts()
}

// Sum returns the fleet now as one sum, without moving it on: its free
// cpus, and its free memory in Mi, each summed over its machines (a
// machine's free memory is the figure its part sends), as interLink's
// Slurm plugin sends them (total less allocated, over every Slurm node):
// "0" and "0Mi" when the fleet is full, a true zero. In a Slurm fleet a
// machine full of cpus may still have memory free.
func (f *Fleet) Sum() pingstatus.ResourcesResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	return f.sum()
}

// sum is Sum, with f.mu held.
func (f *Fleet) sum() pingstatus.ResourcesResponse {
	var cpus, memory int64
	for i := range f.free {
		cpus += int64(f.shown(i))
		memory += f.shownMemory(i)
	}
	return pingstatus.ResourcesResponse{CPU: strconv.FormatInt(cpus, 10), Memory: strconv.FormatInt(memory, 10) + "Mi"}
}

// Freeze stops the native churn for good, as if Churn were 0 from then
// on: no native job starts or ends any more, so that, while no pod is
// created, deleted or ends, every reply after it, of [Fleet.Next] or
// [Fleet.Parts], describes the fleet as it is, the same parts that the
// last Next before Freeze returned. Pods still start when a deletion
// or a pod that ends frees room for them. A benchmark freezes
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
	for i := range f.free {
		free := f.shown(i)
		parts[i] = pingstatus.PartResponse{Name: f.names[i], NodeResponse: pingstatus.NodeResponse{Taints: []pingstatus.TaintResponse{}}}
		if free == 0 {
			parts[i].Taints = []pingstatus.TaintResponse{{Key: FullKey, Value: "true", Effect: "NoSchedule"}}
			continue
		}
		parts[i].Resources = &pingstatus.ResourcesResponse{
			CPU:    strconv.Itoa(free),
			Memory: strconv.FormatInt(f.shownMemory(i), 10) + "Mi",
		}
	}
	return parts
}
