package main

import (
	"net/http"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
)

// AccountingPath is the path, beside the ping's, of the backend's own
// account of its jobs, as Slurm's sacct gives it: not part of interLink's
// plugin API, for tests that count what the backend did.
const AccountingPath = "/jobs"

// Accounting is the answer to GET [AccountingPath].
type Accounting struct {
	// Jobs are every job the backend ever made, first made first, as
	// each is now: deleted and ended ones too, and in a Slurm fleet a
	// pod's earlier jobs and those made while sbatch warned, which the
	// plugin did not record by the pod's UID.
	Jobs []partsfleet.JobStatus `json:"jobs"`
	// UnknownDeletes counts the deletes of a pod the backend had no job
	// of, which interLink's Slurm plugin does not answer.
	UnknownDeletes int `json:"unknownDeletes"`
}

// serveAccounting answers GET [AccountingPath] with jobs' [Accounting].
func serveAccounting(w http.ResponseWriter, jobs *partsfleet.Fleet) {
	writeJSON(w, Accounting{Jobs: jobs.Jobs(), UnknownDeletes: jobs.UnknownDeletes()})
}
