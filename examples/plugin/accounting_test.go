package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// TestAccounting: GET /jobs lists every job the backend made, a pod made
// twice with -slurm twice, the deleted ones too, and counts the deletes
// of a pod it had no job of (which -slurm leaves unanswered).
func TestAccounting(t *testing.T) {
	server, _, _ := serve(t, t0, append([]string{"-slurm"}, twoIdleOf4...)...)
	a := slurmPod("a", "", "2")
	create(t, server, a)
	create(t, server, a)
	if code, body := call(t, server, http.MethodPost, podapi.DeletePath, a); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	pod, _ := json.Marshal(a)
	resp, err := server.Client().Post(server.URL+podapi.DeletePath, "application/json", bytes.NewReader(pod)) // a second delete: no answer
	if err == nil {
		_ = resp.Body.Close()
		t.Fatalf("a delete of a pod without a job answered %s, want no answer", resp.Status)
	}
	code, body := call(t, server, http.MethodGet, AccountingPath, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", AccountingPath, code, body)
	}
	var got Accounting
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, j := range got.Jobs {
		jobs = append(jobs, j.UID+" "+j.ID+" "+j.State.String())
	}
	if diff := cmp.Diff([]string{"a 1 running", "a 2 cancelled"}, jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	if got.UnknownDeletes != 1 {
		t.Errorf("%d deletes of a pod without a job, want 1", got.UnknownDeletes)
	}
}
