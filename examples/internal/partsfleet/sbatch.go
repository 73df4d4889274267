package partsfleet

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Script is a pod's job as interLink's Slurm plugin writes its batch
// script, and what sbatch makes of it ([SlurmScriptOf]).
type Script struct {
	// Job is the job the script asks for.
	Job Job
	// Stderr is what sbatch writes on its stderr as it reads the script,
	// each line ending in a newline: "" when it has nothing to say, an
	// error when it stops (Submitted false), or a warning beside a job
	// it submits.
	Stderr string
	// Submitted reports whether sbatch submits the job, which Slurm then
	// places or refuses ([Fleet.Create]); false when it stopped at the
	// error in Stderr.
	Submitted bool
}

// SlurmScriptOf is the job of pod as interLink's Slurm plugin
// (interlink-slurm-plugin at f8451d9) writes its batch script, and what
// sbatch (Slurm at 284c3b95f0) makes of it:
//
//   - its UID, names, containers, sbatch flags, sleep and exit code are
//     [JobOf]'s;
//   - its cpus (--cpus-per-task) are the largest cpu limit of its
//     containers, init containers among them, rounded up to whole cpus,
//     and its memory (--mem) the largest memory limit, in whole MiB
//     rounded down; requests count for nothing (the plugin's
//     pkg/slurm/Create.go, SubmitHandler). Without any cpu limit, the
//     flags' --cpus-per-task (-c), or else 1; without any memory limit,
//     the flags' --mem, or else 1 MiB; beside a limit the plugin drops
//     those flags (pkg/slurm/prepare.go, produceSLURMScript). A memory
//     limit under 1 MiB makes --mem=0, which Slurm reads as all of a
//     machine's memory and the fleet as none;
//   - its time limit is the flags' --time (-t), read as sbatch reads it
//     (Slurm's src/common/slurm_opt.c, arg_set_time_limit, and
//     src/common/parse_time.c, time_str2mins): minutes,
//     minutes:seconds, hours:minutes:seconds, days-hours,
//     days-hours:minutes or days-hours:minutes:seconds, rounded up to
//     whole minutes; 0, -1, INFINITE or UNLIMITED is none.
//
// sbatch stops, and submits nothing, at the first value it cannot read
// of a --time, a --cpus-per-task or a --mem that it is given, in that
// order (src/common/proc_args.c, parse_int and str_to_mbytes), or at the
// cpu count 0 that only negative cpu limits make, each in its words. It
// warns, and submits the job, when the flags ask fewer tasks than nodes,
// each a whole number (--ntasks or -n, --nodes or -N): "can't run 1
// processes on 2 nodes, setting nnodes to 1" (src/sbatch/opt.c,
// _opt_verify). Each flag is read as [pinOf] reads a pin.
func SlurmScriptOf(pod *corev1.Pod) Script {
	s := Script{Job: JobOf(pod)}
	words := strings.Fields(s.Job.Flags)
	containers := append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...)
	cpus, cpuLimited := slurmCPUs(containers)
	memoryMi, memoryLimited := slurmMemoryMi(containers)
	var minutes int64
	problem := ""
	if v, ok := flagValue(words, "--time", "-t"); ok {
		if minutes, ok = sbatchMinutes(v); !ok {
			problem = "Invalid --time specification"
		}
	}
	switch v, given := flagValue(words, "--cpus-per-task", "-c"); {
	case problem != "":
	case cpuLimited && cpus < 1:
		problem = fmt.Sprintf("Invalid numeric value \"%d\" for --cpus-per-task.", cpus)
	case !cpuLimited && given:
		cpus, problem = sbatchInt("--cpus-per-task", v)
	case !cpuLimited:
		cpus = 1
	}
	switch v, given := flagValue(words, "--mem", ""); {
	case problem != "" || memoryLimited:
	case given:
		var ok bool
		if memoryMi, ok = sbatchMbytes(v); !ok {
			problem = "Invalid --mem specification"
		}
	default:
		memoryMi = 1
	}
	s.Job.CPUs = int(min(cpus, MaxCPUs+1))
	s.Job.MemoryMi, s.Job.TimeLimit = memoryMi, time.Duration(minutes)*time.Minute
	s.Submitted = problem == ""
	if !s.Submitted {
		s.Stderr = "sbatch: error: " + problem + "\n"
	} else if tasks, nodes, ok := fewerTasksThanNodes(words); ok {
		s.Stderr = fmt.Sprintf("sbatch: warning: can't run %d processes on %d nodes, setting nnodes to %d\n", tasks, nodes, tasks)
	}
	return s
}

// slurmCPUs returns the cpus that the Slurm plugin writes in the script
// of containers, and reports whether a cpu limit gave them: the largest
// limit, each rounded up, or 1 for a container without one before any
// container with one.
func slurmCPUs(containers []corev1.Container) (int64, bool) {
	var cpus int64
	limited := false
	for _, c := range containers {
		f := math.Ceil(c.Resources.Limits.Cpu().AsApproximateFloat64())
		n := int64(0)
		switch {
		case f > MaxCPUs:
			n = MaxCPUs + 1
		case f < 0:
			n = -1 // only its sign counts
		case f > 0:
			n = int64(f)
		}
		if n != 0 {
			cpus, limited = max(cpus, n), true
		} else if !limited {
			cpus = 1
		}
	}
	return cpus, limited
}

// slurmMemoryMi returns the memory, in MiB, that the Slurm plugin writes
// in the script of containers, and reports whether a memory limit gave
// it: the largest limit in bytes, or 1 MiB for a container without one
// before any container with one, in whole MiB rounded down.
func slurmMemoryMi(containers []corev1.Container) (int64, bool) {
	var bytes int64
	limited := false
	for _, c := range containers {
		b, _ := c.Resources.Limits.Memory().AsInt64() // 0 when it does not fit
		if b != 0 {
			bytes, limited = max(bytes, b), true
		} else if !limited {
			bytes = 1 << 20
		}
	}
	return bytes >> 20, limited
}

// fewerTasksThanNodes returns the tasks and nodes the flags in words
// ask, and reports whether they ask both, each a whole number, and
// fewer tasks than nodes.
func fewerTasksThanNodes(words []string) (int, int, bool) {
	t, hasTasks := flagValue(words, "--ntasks", "-n")
	n, hasNodes := flagValue(words, "--nodes", "-N")
	tasks, errT := strconv.Atoi(t)
	nodes, errN := strconv.Atoi(n)
	return tasks, nodes, hasTasks && hasNodes && errT == nil && errN == nil && tasks > 0 && tasks < nodes
}

// flagValue returns the value of the sbatch flag long (--name) or short
// (-x, none when "") in words, the last one given, and reports whether
// it is given: --name=value, --name value, -x value or -x=value, and ""
// for a flag given last without its value.
func flagValue(words []string, long, short string) (string, bool) {
	value, given := "", false
	for i, w := range words {
		flag, v, hasValue := strings.Cut(w, "=")
		if flag != long && (short == "" || flag != short) {
			continue
		}
		if !hasValue {
			v = ""
			if i+1 < len(words) {
				v = words[i+1]
			}
		}
		value, given = v, true
	}
	return value, given
}

// pinOf returns the machine that the sbatch flags pin a job to, and
// reports whether they pin it: the value of --nodelist=name,
// --nodelist name, -w name or -w=name, the last one given. The value is
// a machine's name as Slurm knows it, cn001, and nothing else: a node
// name (vk-cn001), a list or a range of machines pin the job to no
// machine of the backend.
func pinOf(flags string) (string, bool) {
	return flagValue(strings.Fields(flags), "--nodelist", "-w")
}

// sbatchInt reads v as sbatch reads a count that must be positive
// (parse_int), and returns it, or what sbatch says of it.
func sbatchInt(name, v string) (int64, string) {
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange) || n <= 0:
		return 0, "Invalid numeric value \"" + v + "\" for " + name + "."
	case n >= math.MaxInt32:
		return 0, fmt.Sprintf("Numeric argument (%d) too large for %s.", n, name)
	}
	return n, ""
}

// sbatchMbytes reads v as sbatch reads --mem (str_to_mbytes): a whole
// number of MiB, or of KiB (rounded up), GiB or TiB with the suffix K, M,
// G or T, either case, and an optional B; it reports false for anything
// else, or a number too large to count.
func sbatchMbytes(v string) (int64, bool) {
	end := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '+' })
	if end < 0 {
		end = len(v)
	}
	n, err := strconv.ParseInt(v[:end], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	suffix := strings.ToUpper(v[end:])
	if len(suffix) == 2 && suffix[1] == 'B' {
		suffix = suffix[:1]
	}
	switch suffix {
	case "":
		return n, true
	case "K":
		return (n + 1023) / 1024, true
	case "M":
		return n, true
	case "G":
		return n << 10, n <= math.MaxInt64>>10
	case "T":
		return n << 20, n <= math.MaxInt64>>20
	}
	return 0, false
}

// sbatchMinutes reads v as sbatch reads --time, and returns its minutes,
// 0 for no limit; it reports false for a value sbatch refuses, and for
// a negative one or one of more seconds than an int32 holds, which
// sbatch does not read as a limit.
func sbatchMinutes(v string) (int64, bool) {
	switch strings.ToUpper(v) {
	case "-1", "INFINITE", "UNLIMITED":
		return 0, true
	}
	days, rest, dashed := strings.Cut(v, "-")
	if !dashed {
		days, rest = "0", v
	}
	d, ok := timeField(days)
	fields := strings.Split(rest, ":")
	n := make([]int64, len(fields))
	for i, f := range fields {
		var fok bool
		n[i], fok = timeField(f)
		ok = ok && fok
	}
	var secs int64
	switch {
	case !ok || len(n) > 3:
		return 0, false
	case dashed: // days-hours[:minutes[:seconds]]
		n = append(n, 0, 0)
		secs = d*86400 + n[0]*3600 + n[1]*60 + n[2]
	case len(n) == 3: // hours:minutes:seconds
		secs = n[0]*3600 + n[1]*60 + n[2]
	case len(n) == 2: // minutes:seconds
		secs = n[0]*60 + n[1]
	default: // minutes
		secs = n[0] * 60
	}
	if secs > math.MaxInt32 {
		return 0, false
	}
	return (secs + 59) / 60, true
}

// timeField reads f, a field of a time: one or more digits, at most an
// int32's.
func timeField(f string) (int64, bool) {
	if f == "" || strings.Trim(f, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(f, 10, 32)
	return n, err == nil
}
