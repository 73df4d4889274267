package main

import (
	"errors"
	"flag"
	"strconv"
	"time"
)

// slurmFlags defines -slurm and the flags of its personality on fs,
// which fill c.
func slurmFlags(fs *flag.FlagSet, c *config) {
	fs.BoolVar(&c.slurm, "slurm", false, "behave as interLink's Slurm plugin (interlink-slurm-plugin at f8451d9), for a provider to be tested against it: the ping wants the body [] (500 \"unexpected end of JSON input\" without one) and is one sum of free cpu and memory (\"0\" when full), with the draining taint of -drain and nothing else; a create is sized by the pod's largest cpu and memory limits and runs sbatch (-sbatch-latency), whose warning, for slurm-job.vk.io/flags asking fewer --ntasks than --nodes, is answered 504 though the job is made, and not recorded; a second create of a pod is a second job, the first left running; spec.nodeName chooses no machine, the backend does, unless the annotation slurm-job.vk.io/flags pins the pod (--nodelist=cn004 or -w cn004), and its --time ends the job at that limit; a status answers every pod asked about, \"state\":{} for a pod without a job, a job's start and end as the status refresh that first saw each, every -status-cache, and 500 when it names a pod whose job was cancelled or timed out and then forgotten (-slurm-min-job-age); a delete of a pod without a job gets no answer at all, and a failed scancel (-scancel-failures) 500. With -parts-generate, its machines and their churn are the backend, summed in the ping; without, every pod starts at once and the ping sends -cpu and -memory")
	fs.Func("status-cache", "serve an answer to a pod status again, to any pod status request, for this long after it was computed, as the Slurm plugin does (a duration, like 10s; default 0, no cache, or 10s with -slurm); the ping is never cached, nor an answer that failed", func(s string) error {
		return setDuration(&c.statusCache, s)
	})
	fs.Func("slurm-min-job-age", "with -slurm: how long after a job ended Slurm forgets it, slurm.conf's MinJobAge (a duration; default 300s, as Slurm's; 0 never): from then on a pod status that names a pod whose job was cancelled from outside or timed out is answered 500, as the Slurm plugin finds no status file of it, and one whose job completed is answered from its status file, without times", func(s string) error {
		return setDuration(&c.minJobAge, s)
	})
	fs.Func("sbatch-latency", "with -slurm: how long each create waits before it is answered, as the Slurm plugin runs sbatch and waits for it (a duration, like 2s; default 0); the job is made even when the client has given up", func(s string) error {
		return setDuration(&c.sbatchLatency, s)
	})
	fs.Func("scancel-failures", "with -slurm: how many scancels fail, the first ones, as when Slurm's controller cannot be reached: each such delete is answered 500 \"exit status 1\" and its job goes on (default 0); a delete of a pod without a job runs no scancel", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return errors.New("want a count of 0 or more")
		}
		c.scancelFailures = n
		return nil
	})
	fs.StringVar(&c.slurmData, "slurm-data", "", "with -slurm: the Slurm plugin's DataRootFolder, under which each create writes what the pod's job reads, as the plugin does with ExportPodData and SHARED_FS=true: `DIR`/<namespace>-<uid>/configMaps/<mount>/<key> for each key of each ConfigMap a container mounts (secrets/ for Secrets, projectedVolumeMaps/ for projected volumes, emptyDirs/<volume> for emptyDirs), with the volume's defaultMode, and <container>_envfile.properties, a line NAME=value for each env var, quoted as a shell word; a refused create, and a delete that cancels the job, remove the pod's folder (default empty: write nothing)")
}

// setDuration sets *d to s, a duration of 0 or more.
func setDuration(d *time.Duration, s string) error {
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return errors.New("want a duration of 0 or more, like 10s")
	}
	*d = v
	return nil
}

// slurmFlagsProblems returns what is wrong with the flags set (by name)
// beside -slurm, or without it when slurm is false, each a line: the
// Slurm plugin's reply is one sum of cpu and memory, with taints, so the
// flags of anything else in a reply are refused, -parts among them
// (-parts-generate makes the machines it sums); the flags of the Slurm
// personality want -slurm.
func slurmFlagsProblems(slurm bool, set map[string]bool) []string {
	var problems []string
	if !slurm {
		for _, name := range []string{"slurm-min-job-age", "sbatch-latency", "scancel-failures", "slurm-data"} {
			if set[name] {
				problems = append(problems, "-"+name+": only with -slurm")
			}
		}
		return problems
	}
	if set["parts"] {
		problems = append(problems, "-parts: not with -slurm: the Slurm plugin's reply is one sum, without parts (-parts-generate makes machines that it sums)")
	}
	for _, name := range []string{"pods", "ephemeral-storage", "hugepages", "gpu", "devices", "basis", "label"} {
		if set[name] {
			problems = append(problems, "-"+name+": not with -slurm: the Slurm plugin's reply has cpu, memory and taints only")
		}
	}
	return problems
}
