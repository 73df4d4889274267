package devicepool_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// heldStep is a step of a run of replies for one group, "gpu": the count
// the plugin says, the devices held for pods the backend has not started
// and for pods it runs, and what happened, for the golden's reader.
type heldStep struct {
	count            int
	waiting, running []string
	note             string
}

// TestDevicesHeldSequence pins down that a device is published once
// while the backend has not started the pod its claim is for. A group of
// 2, a claim allocated to a pod not started, the plugin still saying 2
// free: 2 devices published, not 3 (the scheduler would give the third
// away); the plugin says 1 free before the pod starts: that one is the
// pod's, and 1 is published; the pod starts and the plugin says 1 free:
// 2; a second claim for a pod not started, the plugin still saying 1: 2;
// both run and the plugin says 0: 2; the pods end: 2; two claims for pods
// not started, the plugin saying 2: 2. The same run said as a total
// publishes its count, 2 (1 where the backend gives the node 1), and
// never drops the held device. Each step is applied to the pool the one
// before left; the same ping again changes nothing.
func TestDevicesHeldSequence(t *testing.T) {
	for _, run := range []struct {
		name  string
		basis pingstatus.Basis
		steps []heldStep
	}{
		{"devices-held-available", "", []heldStep{
			{2, nil, nil, "2 free, no claim"},
			{2, []string{"gpu-0"}, nil, "a claim for a pod the backend has not started; the plugin still counts gpu-0 free"},
			{1, []string{"gpu-0"}, nil, "the backend lends a GPU elsewhere: the 1 free is the one gpu-0's pod will use, and gpu-1 goes"},
			{1, nil, []string{"gpu-0"}, "the pod runs; the plugin counts 1 free: gpu-1 is back"},
			{1, []string{"gpu-1"}, []string{"gpu-0"}, "a second claim, for a pod not started; the plugin still counts gpu-1 free"},
			{0, nil, []string{"gpu-0", "gpu-1"}, "both pods run; the plugin counts none free"},
			{2, nil, nil, "the pods ended, their claims are gone; 2 free"},
			{2, []string{"gpu-0", "gpu-1"}, nil, "two claims for pods not started; the plugin still counts both free"},
		}},
		{"devices-held-total", pingstatus.BasisTotal, []heldStep{
			{2, nil, nil, "2 in all, no claim"},
			{2, []string{"gpu-0"}, nil, "a claim for a pod the backend has not started"},
			{1, []string{"gpu-0"}, nil, "the backend gives the node 1 in all: gpu-0, and gpu-1 goes"},
			{2, nil, []string{"gpu-0"}, "the pod runs; 2 in all again: gpu-1 is back"},
			{2, []string{"gpu-1"}, []string{"gpu-0"}, "a second claim, for a pod not started"},
			{2, nil, []string{"gpu-0", "gpu-1"}, "both pods run"},
			{2, nil, nil, "the pods ended, their claims are gone"},
			{2, []string{"gpu-0", "gpu-1"}, nil, "two claims for pods not started"},
		}},
	} {
		t.Run(run.name, func(t *testing.T) {
			var b strings.Builder
			var pool []devicepool.Device
			basis := run.basis
			if basis == "" {
				basis = pingstatus.BasisAvailable + " (the reply does not say)"
			}
			fmt.Fprintf(&b, "A group of devices, gpu, its count read as %s; a * after a device held for a pod the backend runs, a + after one held for a pod it has not started.\n\n", basis)
			for i, step := range run.steps {
				hold(pool, step.waiting, step.running)
				patch := gpuGroup(step.count, run.basis)
				res := apply(pool, patch)
				fmt.Fprintf(&b, "== step %d: %s\ncount %d; held, pod not started: %v; held, pod runs: %v\n", i+1, step.note, step.count, step.waiting, step.running)
				golden.Section(&b, "device changes", res.Changes)
				golden.Section(&b, "apply warnings", res.Warnings)
				fmt.Fprintf(&b, "needs devices: %v\npool after: %s\n\n", len(res.Changes) > 0, poolText(res.Devices))
				if again := apply(res.Devices, patch); len(again.Changes) > 0 {
					t.Errorf("step %d: the same ping again changes %v", i+1, again.Changes)
				}
				pool = slices.Clone(res.Devices)
			}
			golden.Check(t, filepath.Join("testdata", run.name+".golden"), []byte(b.String()))
		})
	}
}
