package partsfleet

// The room of a machine: what it has free, what a job needs of it, and
// what a native job may take.

// shown is the free cpus that machine i replies with, with f.mu held:
// all its cpus when it is stuck, its free cpus otherwise.
func (f *Fleet) shown(i int) int {
	if f.stuck[i] {
		return f.config.CPUs
	}
	return f.free[i]
}

// memory is the free memory, in Mi, of a machine with free cpus free.
func (f *Fleet) memory(free int) int64 {
	return f.config.MemoryMi * int64(free) / int64(f.config.CPUs)
}

// freeMemory is the free memory, in Mi, of machine i in a Slurm fleet,
// with f.mu held: its memory less its native jobs', in proportion of
// their cpus, and less its jobs' (Job.MemoryMi).
func (f *Fleet) freeMemory(i int) int64 {
	return f.memory(f.config.CPUs-f.native[i]) - f.podMemory[i]
}

// shownMemory is the free memory, in Mi, that machine i replies with,
// with f.mu held: all of it when it is stuck; otherwise its
// [Fleet.freeMemory] in a Slurm fleet, and its memory in proportion of
// its free cpus in another.
func (f *Fleet) shownMemory(i int) int64 {
	switch {
	case f.stuck[i]:
		return f.config.MemoryMi
	case f.config.Slurm:
		return f.freeMemory(i)
	}
	return f.memory(f.free[i])
}

// tooLarge returns why the job s can never fit on a machine, or "" when
// it can: more cpus than a machine has, or in a Slurm fleet more memory.
func (f *Fleet) tooLarge(s *JobStatus) string {
	switch {
	case s.CPUs > f.config.CPUs:
		return RefusedTooLarge
	case f.config.Slurm && s.MemoryMi > f.config.MemoryMi:
		return RefusedTooMuchMemory
	}
	return ""
}

// fits reports whether j fits in machine i's free room now, with f.mu
// held: its cpus, and in a Slurm fleet its memory ([Fleet.freeMemory]).
func (f *Fleet) fits(j *job, i int) bool {
	return j.status.CPUs <= f.free[i] && (!f.config.Slurm || j.status.MemoryMi <= f.freeMemory(i))
}

// nativeRoom is how many cpus a native job may take on machine i, with
// f.mu held: its free cpus, and in a Slurm fleet no more than leave its
// jobs their memory, a native job taking memory in proportion of its
// cpus.
func (f *Fleet) nativeRoom(i int) int {
	held := f.podMemory[i]
	if !f.config.Slurm || held <= 0 || f.config.MemoryMi <= 0 {
		return f.free[i]
	}
	// The most cpus n for which memory(CPUs-native-n) >= held.
	keep := (held*int64(f.config.CPUs) + f.config.MemoryMi - 1) / f.config.MemoryMi
	return int(max(0, min(int64(f.free[i]), int64(f.config.CPUs-f.native[i])-keep)))
}
