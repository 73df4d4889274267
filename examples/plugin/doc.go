// Command plugin is a small plugin status endpoint, standard library only:
// it describes its backend with pingstatus's wire types, checks the reply
// with Validate, and serves it.
//
//	go run ./examples/plugin -addr 127.0.0.1:4000 -cpu 64 -memory 250000Mi -gpu nvidia.com/gpu=4 -ephemeral-storage 1800Gi -hugepages 2Mi=4Gi
//	curl -s 127.0.0.1:4000/status | go run ./examples/pingcheck -strict -
//
// It describes its backend with node labels too, each -label one: in
// node-feature-discovery's namespaces (feature.node.kubernetes.io,
// profile.node.kubernetes.io), which every provider allows, or in those
// the provider allows besides, which -label-namespaces names so that the
// plugin checks its reply as that provider will:
//
//	go run ./examples/plugin -label-namespaces nvidia.com -label nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB -label feature.node.kubernetes.io/cpu-model.vendor_id=AMD
//	curl -s 127.0.0.1:4000/status | go run ./examples/pingcheck -strict -label-namespaces nvidia.com -
//
// It describes its GPUs as devices with -devices, a JSON file holding the
// reply's "devices" list (groups of identical devices, with attributes in
// resource.k8s.io/v1's shape and NVIDIA's names), which a provider on
// Kubernetes 1.34 or later publishes for Dynamic Resource Allocation:
//
//	go run ./examples/plugin -devices examples/plugin/testdata/gpus.json
//
// Its figures, the devices' counts among them, are what the backend has
// free now, the provider's default; with -basis total they are all the
// backend gives the node, its pods' share in them.
//
// It serves its backend as parts, each a node of its own (machines, or
// partitions of identical machines), with -parts, a JSON file holding
// them, or with -parts-generate, a fleet of machines whose jobs start and
// end at random between replies, for a benchmark of a provider:
//
//	go run ./examples/plugin -parts examples/plugin/testdata/parts.json
//	go run ./examples/plugin -parts-generate 5000 -parts-churn 0.02 -parts-seed 7
//
// It runs pods, too, answering interLink's plugin API for pods (package
// podapi) beside the ping: POST /create of one pod, answered with its
// job, GET /status with a list of pods, and POST /delete of one pod.
// A create is refused (504) as the Slurm plugin refuses it
// (pkg/slurm/prepare.go, prepareMounts), in either mode, at the first
// mount, init containers first, of a volume the pod has not (with
// -slurm, no answer: the plugin panics), by a container without an
// entry under "container", or of a ConfigMap or Secret missing from
// that entry, optional or not; a projected volume without its map is
// mounted empty, and a container's mounts after a downwardAPI volume
// are not looked at.
// With -parts-generate each pod's job queues on its node's machine until
// the machine has its cpus free; otherwise every pod starts at once. A
// pod whose first container runs sleep N completes N seconds after it
// starts, and one whose first container is a shell's -c with "exit N",
// "sleep S; exit N" or "sleep S && exit N" ends S seconds after it
// starts (at once for exit N alone) with the exit code N, so that a test
// can run a Kubernetes Job whose pods fail: its containers are
// terminated with that code, the reason "Completed" for 0 and "Error"
// for any other, as a kubelet says them:
//
//	curl -s -X POST 127.0.0.1:4000/create -d '{"pod": {"metadata": {"uid": "u1"}, "spec": {"nodeName": "vk-cn001"}}}'
//	curl -s -X GET 127.0.0.1:4000/status -d '[{"metadata": {"uid": "u1"}}]'
//	curl -s -X POST 127.0.0.1:4000/delete -d '{"metadata": {"uid": "u1"}}'
//
// With -slurm it behaves as interLink's Slurm plugin does
// (interlink-slurm-plugin at f8451d9), for a provider to be tested
// against it: the ping wants the body [] (500 "unexpected end of JSON
// input" without one) and is one sum of free cpus and memory ("0" when
// full); a second create of a pod is a second job, the first left
// running; spec.nodeName chooses no machine, only the annotation
// slurm-job.vk.io/flags does (--nodelist=cn004); a status answers every
// pod asked about, one container status for each container of the pod
// sent, "state":{} for a pod without a job, and is cached for 10 seconds
// (-status-cache); and a delete of a pod without a job gets no answer at
// all. Its code gives it these too:
//
//   - A job is sized as the plugin writes --cpus-per-task and --mem
//     (pkg/slurm/Create.go, SubmitHandler): its containers' largest cpu
//     limit, init containers among them, rounded up, and largest memory
//     limit; requests count for nothing; without limits, the
//     annotation's --cpus-per-task and --mem, or 1 cpu and 1 MiB
//     (pkg/slurm/prepare.go, produceSLURMScript). Both decide where a
//     job fits on the machines of -parts-generate. The annotation's
//     --time, read as sbatch reads it (minutes, minutes:seconds,
//     hours:minutes:seconds, days-hours…), ends the job at that limit,
//     timed out.
//
//   - A create runs sbatch and waits for it: -sbatch-latency makes each
//     take that long, and the job is made even when the client gave up.
//     Whatever sbatch writes on its stderr is answered 504
//     (pkg/slurm/prepare.go, SLURMBatchSubmit), a warning too: an
//     annotation that asks fewer tasks than nodes (--ntasks=1
//     --nodes=2) makes sbatch warn and still make the job, which the
//     plugin then does not record by the pod's UID: the pod's status is
//     "state":{} (or its earlier job's), its delete gets no answer (or
//     cancels its earlier job), and the job runs on.
//
//   - A status learns of a job's start and end only at a refresh, one
//     every -status-cache (pkg/slurm/Status.go, StatusHandler, which
//     keeps them in its JidStruct): a 2-second job that ran between two
//     refreshes is answered terminated, exit code 0, "startedAt": null.
//     A failed job (Slurm's F) is answered as a completed one (CD), with
//     its own exit code and no reason, as the plugin answers its case
//     "F" (reading the code with getExitCode, pkg/slurm/prepare.go).
//
//   - Slurm forgets an ended job -slurm-min-job-age after it ended
//     (MinJobAge, 300 s); squeue -j then fails, and the plugin reads the
//     job's status file (run-main.status), which a job cancelled from
//     outside or timed out never wrote: a status request that names its
//     pod is answered 500, whole. A job that completed or failed on its
//     own is answered from the file, terminated with its exit code,
//     without times.
//
//   - With -scancel-failures N the first N scancels fail: each such
//     delete is answered 500 "exit status 1" and the job goes on
//     (pkg/slurm/Delete.go, StopHandler).
//
//   - With -slurm-data DIR a create writes what the plugin writes under
//     its DataRootFolder for the pod's job (pkg/slurm/prepare.go,
//     prepareMounts, mountData and createEnvFile, with ExportPodData and
//     SHARED_FS=true): DIR/<namespace>-<uid>/configMaps/<mount>/<key> for
//     each key of the data of each ConfigMap a container mounts, and
//     secrets/ and projectedVolumeMaps/ likewise, each file of its
//     volume's defaultMode; emptyDirs/<volume>/; and for each container
//     with env vars <container>_envfile.properties, a line NAME=value for
//     each, quoted as shellescape.Quote quotes it. A refused create, and
//     a delete that cancels the job, remove the pod's folder.
//
// A Slurm backend of four machines, and a pod pinned to one of them:
//
//	go run ./examples/plugin -slurm -parts-generate 4 -parts-cpus 8 -parts-churn 0
//	curl -s -X GET 127.0.0.1:4000/status -d '[]'
//	curl -s -X POST 127.0.0.1:4000/create -d '{"pod": {"metadata": {"uid": "u1", "annotations": {"slurm-job.vk.io/flags": "--nodelist=cn002 --time=5"}},
//	  "spec": {"containers": [{"name": "main", "command": ["sleep", "60"], "resources": {"limits": {"cpu": "2", "memory": "4Gi"}}}]}}}'
//
// It serves as plugins are deployed, too: HTTPS with -cert-file and
// -key-file, requiring client certificates signed by -client-ca-file
// (mutual TLS, TLS 1.2 at least), requiring the bearer token of
// -token-file (read at each request, so that a rotated token is taken at
// once), or on a Unix socket with -unix-socket instead of -addr.
package main
