package nodeapply_test

import (
	"testing"
	"time"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// The replies of interLink's Slurm plugin, which sends its cluster's free
// cpu and memory at each ping: room, none at all, and no cpu.
const (
	slurmRoom   = `{"status":"ok","resources":{"cpu":"24","memory":"96000Mi"}}`
	slurmFull   = `{"status":"ok","resources":{"cpu":"0","memory":"0"}}`
	slurmNoCPU  = `{"status":"ok","resources":{"cpu":"0","memory":"1200Mi"}}`
	slurmRoomAt = `{"status":"ok","resources":{"cpu":"8","memory":"1200Mi"}}`
)

// backendFullCases are pings in order on one node, for rule backend-full;
// each has a golden file in testdata/backendfull showing, after each
// ping, the changes, the warnings, the conditions, the taints, the
// object and status patches, and capacity and allocatable.
var backendFullCases = []sequenceCase{
	// The cluster fills, frees memory, stays full through replies with no
	// news of cpu and memory, a failed ping among them, and has room
	// again: the taint comes, changes its value in place, stays, and goes.
	{"slurm-fills-and-empties", "interlink-node.json", nodeapply.Options{}, []step{
		{at: 0, body: slurmRoom},
		{at: 30 * time.Second, body: slurmFull},
		{at: 60 * time.Second, body: slurmFull},
		{at: 90 * time.Second, body: slurmNoCPU},
		{at: 120 * time.Second, body: "ok"},
		{at: 150 * time.Second, body: `{"status":"ok"}`, restart: true},
		fail(180*time.Second, "HTTP 500"),
		{at: 210 * time.Second, body: `{"status":"ok","resources":{"pods":"90"}}`},
		{at: 240 * time.Second, body: slurmRoomAt},
	}},
	// A total of zero is #558's figure, not a full backend: refused, so
	// no taint, and no news either, so a full backend's taint stays;
	// memory's figure is news enough to take it away.
	{"total-zero-is-no-full-backend", "interlink-node.json", nodeapply.Options{}, []step{
		{at: 0, body: `{"status":"ok","resources":{"basis":"total","cpu":"0","memory":"0"}}`},
		{at: 30 * time.Second, body: slurmFull},
		{at: 60 * time.Second, body: `{"status":"ok","resources":{"cpu":"0","memory":"0","basis":"total"}}`},
		{at: 90 * time.Second, body: `{"status":"ok","resources":{"cpu":"0","memory":"64Gi","basis":"total"}}`},
	}},
	// pods and scratch space of zero stay refused: no taint, nothing
	// drained.
	{"pods-zero-refused", "interlink-node.json", nodeapply.Options{}, []step{
		{at: 0, body: `{"status":"ok","resources":{"cpu":"24","memory":"96000Mi","pods":"0","ephemeralStorage":"0"}}`},
	}},
	// No plugin sets the key, nor takes it away with its taints list;
	// interLink 0.6.2's rule of taints keeps it as it keeps the
	// protected ones.
	{"plugin-cannot-touch-it", "node-with-plugin-taints.json", nodeapply.Options{}, []step{
		{at: 0, body: slurmNoCPU},
		{at: 30 * time.Second, body: `{"status":"ok","taints":[]}`},
		{at: 60 * time.Second, body: `{"status":"ok","taints":[{"key":"pingnode.io/backend-full","value":"memory","effect":"NoSchedule"}]}`},
	}},
	{"compat-keeps-it", "node-with-plugin-taints.json", nodeapply.Options{ReplaceAllTaints: true}, []step{
		{at: 0, body: slurmFull},
		{at: 30 * time.Second, body: `{"status":"ok","taints":[{"key":"vendor.io/maintenance","effect":"NoSchedule"}]}`},
		{at: 60 * time.Second, body: `{"status":"ok","taints":[]}`},
	}},
	// Full and unreachable: the two taints stand side by side, and an
	// answer with room takes both away.
	{"full-then-unreachable", "interlink-node.json", nodeapply.Options{Unreachable: nodeapply.UnreachableNoSchedule}, []step{
		{at: 0, body: slurmFull},
		fail(30*time.Second, "connection refused"),
		fail(90*time.Second, "connection refused"),
		{at: 120 * time.Second, body: slurmRoom},
	}},
	// With AllowZero a zero is a figure, and no backend is full.
	{"allow-zero-writes-it", "interlink-node.json", nodeapply.Options{Reply: pingstatus.Options{AllowZero: true}}, []step{
		{at: 0, body: slurmNoCPU},
	}},
}

// TestBackendFull runs the backend-full cases against their goldens in
// testdata/backendfull.
func TestBackendFull(t *testing.T) {
	for _, tc := range backendFullCases {
		t.Run(tc.name, func(t *testing.T) { runSequence(t, tc, "backendfull", true) })
	}
}
