package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// The backend's confirmation (-confirm, internal/supervise, internal/jobs): a pod
// that asks waits before it binds until the backend runs it.

// TestConfirmDefaults: -confirm with every other setting at its default,
// and the sample plugin as shipped (one node, whose pods start at once).
// The node publishes its confirmation device; a pod that asks binds once
// its job runs on the backend, which the provider made while the pod
// waited; a pod that does not ask binds as before, and gets its job when
// it binds; both pods' statuses follow their jobs (Running).
func TestConfirmDefaults(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t)
	cfg := configOfArgs(t, "-confirm", "-plugin", url)
	name := cfg.Static.Name
	forgetConfirmation(t, []string{name}, []string{"confirm-asks", "confirm-plain"})
	p := runConfig(t, cfg)
	confirmingReady(t, name)

	asks := askingPod("confirm-asks", "", "1")
	asks.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
	plain := partPod("confirm-plain", "", nil, "1")
	plain.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
	createTestPod(t, asks)
	createTestPod(t, plain)
	boundTo(t, "confirm-asks", name)
	boundTo(t, "confirm-plain", name)
	bound, problems := startedBeforeBound(t.Context(), t, url, []string{"confirm-asks"})
	if len(bound) != 1 || len(problems) > 0 {
		t.Errorf("bound %v: %v", bound, problems)
	}
	// The pod that does not ask gets its job when it binds, and both
	// pods' statuses follow their jobs.
	eventually(t, "both pods run on the backend, and say so", func(ctx context.Context) (bool, string) {
		jobs := backendJobs(ctx, t, url, "confirm-asks", "confirm-plain")
		var phases []string
		for _, name := range []string{"confirm-asks", "confirm-plain"} {
			phases = append(phases, name+" "+string(storedPod(t, name).Status.Phase))
		}
		running := len(jobs) == 2 && slices.Equal(phases, []string{"confirm-asks Running", "confirm-plain Running"})
		return running, fmt.Sprintf("jobs %d, %v", len(jobs), phases)
	})
	_ = p
}

// TestConfirmRefusedAndDeadline: two parts, a and b, of a backend whose
// word the test decides. The backend refuses r on a: the claim is
// refused, the job removed, and r binds to b once a is full. s queues on
// a, whose reply still says it has room (a native job took it between
// pings): after the deadline its claim is refused, its job removed, and
// it binds to b. No pod is bound while its job is queued, and nothing is
// lost. The API server counts one write an allocation an outcome.
func TestConfirmRefusedAndDeadline(t *testing.T) {
	needsControlPlane(t)
	const template, owner = "vk-confirm-{part}", "vk-confirm"
	rule := func(pod, node string) string {
		switch {
		case strings.HasSuffix(node, "-b"):
			return "running"
		case pod == "confirm-r":
			return "refused"
		}
		return "queued"
	}
	backend := newConfirmBackend(t, map[string]int{"a": 4}, rule)
	url := backend.server.URL + "/status"
	cfg := partsConfig(url, template, owner, 0)
	cfg.Interval, cfg.Timeout = 500*time.Millisecond, 300*time.Millisecond
	cfg.Confirm, cfg.ConfirmDeadline = true, 8*time.Second
	nodeA, nodeB := cfg.Parts.NodeName("a"), cfg.Parts.NodeName("b")
	pods := []string{"confirm-r", "confirm-s"}
	forgetConfirmation(t, []string{nodeA, nodeB}, pods)
	s := newPartsProvider(t, cfg, "a", "b")
	runSupervisor(t, s)
	partsReady(t, cfg.Parts, "4", "a")
	confirmationDevices(t, nodeA)

	before := mustReadRequests(t)
	createTestPod(t, askingPod("confirm-r", owner, "1"))
	eventually(t, "r's job on a refused and removed", func(context.Context) (bool, string) {
		_, deleted := backend.calls()
		return slices.Contains(deleted, "confirm-r@"+nodeA), fmt.Sprint(deleted)
	})
	if node, _, _ := placement(t.Context(), "confirm-r"); node != "" {
		t.Fatalf("r was bound to %s, which refused it", node)
	}
	backend.set("a", 0)
	backend.set("b", 4)
	partsReady(t, cfg.Parts, "4", "b")
	confirmationDevices(t, nodeB)
	boundTo(t, "confirm-r", nodeB)

	backend.set("a", 4)
	backend.set("b", 0)
	eventually(t, "a has room again and b none", func(ctx context.Context) (bool, string) {
		a, b := stored(ctx, t, nodeA), stored(ctx, t, nodeB)
		return !taintSet(a)["plugin.example.com/full=true:NoSchedule"] && taintSet(b)["plugin.example.com/full=true:NoSchedule"], fmt.Sprint(keys(taintSet(a)), keys(taintSet(b)))
	})
	createTestPod(t, askingPod("confirm-s", owner, "1"))
	eventually(t, "s's job queued on a", func(context.Context) (bool, string) {
		created, _ := backend.calls()
		return slices.Contains(created, "confirm-s@"+nodeA), fmt.Sprint(created)
	})
	queued := time.Now()
	within(t, 30*time.Second, "s's job on a removed at the deadline", func(ctx context.Context) (bool, string) {
		if node, _, _ := placement(ctx, "confirm-s"); node != "" {
			t.Fatalf("s was bound to %s while its job was queued", node)
		}
		_, deleted := backend.calls()
		return slices.Contains(deleted, "confirm-s@"+nodeA), fmt.Sprint(deleted)
	})
	if waited := time.Since(queued); waited < 6*time.Second {
		t.Errorf("s's job was removed %v after it queued, before the deadline of %v", waited, cfg.ConfirmDeadline)
	}
	backend.set("a", 0)
	backend.set("b", 4)
	boundTo(t, "confirm-s", nodeB)

	eventually(t, "nothing lost", func(ctx context.Context) (bool, string) {
		bound, problems := startedBeforeBound(ctx, t, url, pods)
		if len(problems) > 0 {
			return false, strings.Join(problems, "; ")
		}
		created, deleted := backend.calls()
		live := len(created) - len(deleted)
		return len(bound) == 2 && live == 2, fmt.Sprintf("bound %v; jobs made %v, removed %v", bound, created, deleted)
	})
	if c := s.Jobs().Counts(); c.Confirmed != 2 || c.Refused != 2 {
		t.Errorf("claims written: %d confirmed, %d refused; want 2 and 2 (one an allocation an outcome)", c.Confirmed, c.Refused)
	}
	// Counted by the API server: four allocations, each written once.
	if got := mustReadRequests(t).since(before).api["APPLY resourceclaims/status"]; got != 4 {
		t.Errorf("the API server counted %v applies of claims' status, want 4: one an allocation an outcome", got)
	}
}

// TestConfirmSharedBackend: the sample plugin as a shared backend of 24
// machines of one cpu each, whose native jobs take and free machines
// between pings, and 10 pods that ask for confirmation and 1 cpu each. No
// pod is bound while its job is queued; each binds once its job runs. The
// same pods without confirmation, whose jobs the provider makes once they
// are bound (as interLink does), are reported: how many queue.
func TestConfirmSharedBackend(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t, "-parts-generate", "24", "-parts-cpus", "1", "-parts-churn", "0.5", "-parts-seed", "5")
	const template, owner = "vk-shared-{part}", "vk-shared"
	cfg := partsConfig(url, template, owner, 0)
	cfg.Interval, cfg.Timeout = time.Second, 500*time.Millisecond
	cfg.Confirm, cfg.ConfirmDeadline = true, 20*time.Second
	machines := make([]string, 24)
	nodes := make([]string, 24)
	for i := range machines {
		machines[i] = fmt.Sprintf("cn%03d", i+1)
		nodes[i] = cfg.Parts.NodeName(machines[i])
	}
	asking := make([]string, 10)
	plain := make([]string, 10)
	for i := range asking {
		asking[i] = fmt.Sprintf("shared-asks-%d", i)
		plain[i] = fmt.Sprintf("shared-plain-%d", i)
	}
	forgetConfirmation(t, nodes, slices.Concat(asking, plain))
	s := newPartsProvider(t, cfg, machines...)
	runSupervisor(t, s)
	eventually(t, "every machine has its node", func(ctx context.Context) (bool, string) {
		got := ownedNodes(ctx, t, owner)
		return len(got) == len(machines), fmt.Sprint(len(got), " nodes")
	})
	confirmationDevices(t, nodes...)

	uids := map[string]string{}
	for _, name := range asking {
		createTestPod(t, askingPod(name, owner, "1"))
		uids[string(storedPod(t, name).UID)] = name
	}
	bind := newBindTimes()
	within(t, 4*time.Minute, "every pod that asks is bound, each once its job ran", func(ctx context.Context) (bool, string) {
		bound, problems := startedBeforeBound(ctx, t, url, asking)
		if len(problems) > 0 {
			t.Fatalf("%s", strings.Join(problems, "; "))
		}
		_, _ = bind.poll(ctx, t, url, uids)
		return len(bound) == len(asking), fmt.Sprintf("%d of %d bound", len(bound), len(asking))
	})
	t.Logf("with confirmation: %d pods bound, none while its job was queued; the claims: %+v; job start to bind: %v", len(asking), s.Jobs().Counts(), bind.latencies(t.Context(), t, url, uids))
	for _, name := range asking {
		deletePod(t, name)
	}

	// Without confirmation: the pods bind first, and their jobs are made
	// after, as interLink does.
	for _, name := range plain {
		createTestPod(t, partPod(name, owner, nil, "1"))
	}
	within(t, 2*time.Minute, "every pod without confirmation bound, and its job made", func(ctx context.Context) (bool, string) {
		made := len(backendJobs(ctx, t, url, plain...))
		return made == len(plain), fmt.Sprintf("%d of %d", made, len(plain))
	})
	var queued []string
	for name, job := range backendJobs(t.Context(), t, url, plain...) {
		if confirm.StateOf(job.Containers) != confirm.JobStarted {
			queued = append(queued, name)
		}
	}
	slices.Sort(queued)
	t.Logf("without confirmation: %d of %d pods bound, then queued on their machine: %v", len(queued), len(plain), queued)
}

// TestConfirmKilled: the provider, a process of its own, is killed with
// SIGKILL while two pods wait on a, their jobs queued; the backend starts
// them while it is down. Started again, it reads on each pod the record
// of its job (the node it was made for), adopts both jobs, and confirms
// each once it runs. Both pods bind; the backend, which makes a second
// job for a second create as interLink's Slurm plugin does, made one job
// a pod and removed none: nothing leaked, nothing lost.
func TestConfirmKilled(t *testing.T) {
	confirmAfterLoss(t, "vk-ckill", false)
}

// TestConfirmTakeover: as TestConfirmKilled, with two replicas under
// leader election: the leader is killed, and the standby, which leads
// then, carries on the confirmations.
func TestConfirmTakeover(t *testing.T) {
	confirmAfterLoss(t, "vk-ctake", true)
}

// confirmAfterLoss runs the provider of owner's parts as a process, kills
// it while two pods wait with their jobs queued, has the backend start the
// jobs, and runs it again (with elect, a standby already running takes
// over instead); then both pods bind, and the backend has their two jobs
// alone.
func confirmAfterLoss(t *testing.T, owner string, elect bool) {
	needsControlPlane(t)
	template := owner + "-{part}"
	backend := newConfirmBackend(t, map[string]int{"a": 4}, func(string, string) string { return "queued" })
	url := backend.server.URL + "/status"
	args := []string{"-parts", "-node", template, "-parts-owner", owner, "-plugin", url, "-interval", "500ms", "-timeout", "300ms", "-confirm"}
	lease := "pingnode-" + owner
	if elect {
		args = append(args, "-leader-elect", "-leader-elect-namespace", testElectionNS, "-leader-elect-name", lease,
			"-leader-elect-lease-duration", testElectionLease.String(), "-leader-elect-renew-deadline", testElectionRenew.String(),
			"-leader-elect-retry-period", testElectionRetry.String())
		t.Cleanup(func() {
			_ = client.CoordinationV1().Leases(testElectionNS).Delete(context.Background(), lease, metav1.DeleteOptions{})
		})
	}
	cfg := configOfArgs(t, args...)
	nodeA := cfg.Parts.NodeName("a")
	pods := []string{owner + "-0", owner + "-1"}
	forgetConfirmation(t, []string{nodeA}, pods)
	deleteNode(t, nodeA)
	forgetNodes(t, nodeA)
	id := grant(t, owner, accessOfArgs(t, args))
	kubeconfig := id.kubeconfig(t, envHost)
	replica := func(name string) *providerProcess {
		if elect {
			return runProviderProcess(t, kubeconfig, append([]string{"-leader-elect-id", name}, args...)...)
		}
		return runProviderProcess(t, kubeconfig, args...)
	}
	first := replica(replicaA)
	partsReady(t, cfg.Parts, "4", "a")
	confirmationDevices(t, nodeA)
	if elect {
		replica(replicaB)
	}
	for _, name := range pods {
		createTestPod(t, askingPod(name, owner, "1"))
	}
	eventually(t, "both jobs queued on a", func(context.Context) (bool, string) {
		live := backend.live()
		return len(live) == 2, fmt.Sprint(live)
	})
	first.kill(t)
	backend.setRule(func(string, string) string { return "running" })
	backend.mu.Lock()
	for uid, s := range backend.jobs { // the backend starts them while no provider runs
		backend.jobs[uid] = jobStatus(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: s.Name, UID: types.UID(uid), Namespace: s.Namespace},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "job"}}}}, "running")
	}
	backend.mu.Unlock()
	for _, name := range pods {
		if node, _, _ := placement(t.Context(), name); node != "" {
			t.Fatalf("%s was bound to %s before any confirmation", name, node)
		}
	}

	if !elect {
		replica(replicaB)
	}
	for _, name := range pods {
		boundTo(t, name, nodeA)
	}
	eventually(t, "nothing leaked, nothing lost", func(ctx context.Context) (bool, string) {
		bound, problems := startedBeforeBound(ctx, t, url, pods)
		if len(problems) > 0 {
			return false, strings.Join(problems, "; ")
		}
		live := backend.live()
		want := []string{pods[0] + "@" + nodeA, pods[1] + "@" + nodeA}
		return len(bound) == 2 && slices.Equal(live, want), fmt.Sprintf("bound %v, jobs %v", bound, live)
	})
	if elect {
		if holder := leaseHolder(t.Context(), testElectionNS, lease); holder != replicaB {
			t.Errorf("the election's Lease is held by %q, want %s", holder, replicaB)
		}
	}
	created, deleted := backend.calls()
	slices.Sort(created)
	if want := []string{pods[0] + "@" + nodeA, pods[1] + "@" + nodeA}; !slices.Equal(created, want) || len(deleted) > 0 {
		t.Errorf("jobs made %v, removed %v; want %v made, one a pod, adopted after the loss, and none removed", created, deleted, want)
	}
}

// TestConfirmFence: with -confirm beside -dra-driver, the admission policy
// of -print-node-policy lets the provider's own token write the slices of
// both its drivers on its own node, and create the confirmation class;
// it refuses, 403 Forbidden, a slice of its confirmation driver on
// another node, a slice of a third driver on its node, and another class.
// The pods' fence is that of running pods, with or without -confirm: it
// may write the annotations of their jobs (the record, the job's ID) and
// the status of the pods of its own node, and nothing else of a pod.
func TestConfirmFence(t *testing.T) {
	needsControlPlane(t)
	const driver, third, own, other = "fence.gpu.pingnode.example.com", "other.gpu.example.com", "vk-confirm-fence", "vk-confirm-fence-other"
	ctx := t.Context()
	cfg := testConfig(own, "http://127.0.0.1:1/status")
	cfg.DRADriver, cfg.Confirm = driver, true
	id := grant(t, own, accessFor("", "", []vnode.Config{cfg}, nil))
	for _, s := range [][2]string{{driver, own}, {confirm.DefaultDriver, own}, {confirm.DefaultDriver, other}, {third, own}} {
		deleteSlicesAtEnd(t, s[0], s[1])
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	slice := func(driver, node string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := id.client.ResourceV1().ResourceSlices().Create(ctx, testSlice(driver, node), dryRun)
			return err
		}
	}
	class := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := id.client.ResourceV1().DeviceClasses().Create(ctx, confirm.Class(name, confirm.DefaultDriver, confirm.DefaultResource), dryRun)
			return err
		}
	}
	if err := class("another-class")(ctx); err != nil {
		t.Errorf("RBAC alone: the provider creates another class: %v, want it created", err)
	}
	createTestPod(t, partPod("confirm-fence-pod", own, nil, "1"))
	patchPod := func(patch string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := id.client.CoreV1().Pods(metav1.NamespaceDefault).Patch(ctx, "confirm-fence-pod", types.MergePatchType, []byte(patch),
				metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	for _, node := range []string{own, other} { // pods bound to each, as the scheduler would bind them
		pod := partPod("confirm-fence-on-"+node, own, nil, "1")
		pod.Spec.NodeSelector, pod.Spec.NodeName = nil, node
		createTestPod(t, pod)
	}
	patchStatus := func(node string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := id.client.CoreV1().Pods(metav1.NamespaceDefault).Patch(ctx, "confirm-fence-on-"+node, types.StrategicMergePatchType,
				[]byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}, "status")
			return err
		}
	}
	record := patchPod(`{"metadata":{"annotations":{"` + jobs.RecordAnnotation + `":"{\"node\":\"` + own + `\"}"}}}`)
	if err := patchPod(`{"metadata":{"labels":{"stolen":"yes"}}}`)(ctx); err != nil {
		t.Errorf("RBAC alone: the provider labels a pod: %v, want it labelled", err)
	}
	installPolicy(ctx, t, id.access.Policy())
	const refusal = "may write only ResourceSlices of its drivers " + driver + ", " + confirm.DefaultDriver + " on its own nodes"
	const podRefusal = "change on a pod nothing but its annotations " + jobs.RecordAnnotation + " and " + jobs.JobIDAnnotation
	eventually(t, "the policy is in force", func(ctx context.Context) (bool, string) {
		err := slice(confirm.DefaultDriver, other)(ctx)
		return err != nil && strings.Contains(err.Error(), refusal), errorText(err)
	})
	for _, c := range []struct {
		what    string
		do      func(context.Context) error
		refusal string // "": allowed
	}{
		{"create a slice of its devices on its node", slice(driver, own), ""},
		{"create a confirmation slice on its node", slice(confirm.DefaultDriver, own), ""},
		{"create the confirmation class", class(confirm.DefaultClass), ""},
		{"create a confirmation slice on another node", slice(confirm.DefaultDriver, other), refusal},
		{"create a slice of a third driver on its node", slice(third, own), refusal},
		{"create another class", class("another-class"), "may create only the DeviceClass " + confirm.DefaultClass},
		{"record a job on a pod", record, ""},
		{"write a job's ID on a pod", patchPod(`{"metadata":{"annotations":{"` + jobs.JobIDAnnotation + `":"7"}}}`), ""},
		{"label a pod", patchPod(`{"metadata":{"labels":{"stolen":"yes"}}}`), podRefusal},
		{"annotate a pod otherwise", patchPod(`{"metadata":{"annotations":{"example.com/x":"7"}}}`), podRefusal},
		{"change a pod's spec", patchPod(`{"spec":{"activeDeadlineSeconds":5}}`), podRefusal},
		{"write the status of a pod on its node", patchStatus(own), ""},
		{"write the status of a pod on another node", patchStatus(other), "write the status only of pods bound to its own nodes"},
	} {
		err := c.do(ctx)
		switch {
		case c.refusal == "" && err != nil && !apierrors.IsAlreadyExists(err):
			t.Errorf("with the policy, the provider may not %s: %v", c.what, err)
		case c.refusal != "":
			if msg := mustForbid(t, "with the policy, the provider may "+c.what, err); !strings.Contains(msg, c.refusal) || !apierrors.IsForbidden(err) {
				t.Errorf("%s: refused with %q, want the policy's %q, 403 Forbidden", c.what, msg, c.refusal)
			}
		}
	}
}
