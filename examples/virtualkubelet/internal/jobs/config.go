package jobs

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/poddata"
)

// Plugin is the plugin's API for pods, as pingclient.Client calls it.
type Plugin interface {
	Create(ctx context.Context, req podapi.CreateRequest) (created podapi.Created, list bool, err error)
	Status(ctx context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error)
	Delete(ctx context.Context, pod *corev1.Pod) error
}

// Config is what a [Keeper] reads and writes through.
type Config struct {
	// Client writes the claims' status and the nodes' slices.
	Client kubernetes.Interface
	Plugin Plugin
	// Claims returns the claims whose allocations take a device from a
	// pool of driver: shared objects, read-only. Waiting are the pods not
	// bound to a node. With both nil, no pod is held for the backend's
	// confirmation: a pod gets its job when it binds.
	Claims  func(driver, pool string) []*resourcev1.ResourceClaim
	Waiting corev1listers.PodLister
	// Bound returns the pods bound to a node of the provider's.
	Bound func(node string) []*corev1.Pod
	// Nodes returns the nodes the provider serves now.
	Nodes func() []*corev1.Node
	// Driver is the confirmation devices' DRA driver, and Resource the
	// extended resource a pod asks with.
	Driver, Resource string
	// FieldManager writes the claims' status.
	FieldManager string
	// Deadline is confirm.Options.Deadline.
	Deadline time.Duration
	// PinAnnotation and PinFlag pin the job of a part's node to its part,
	// in the plugin's words: the pod sent to the plugin carries PinFlag
	// and the part's name appended to its annotation PinAnnotation, after
	// the flags it had. interLink's Slurm plugin pins by sbatch flags:
	// slurm-job.vk.io/flags and --nodelist=. An empty PinAnnotation pins
	// nothing.
	PinAnnotation, PinFlag string
	// Part returns the part of a node of the provider's; "" for a node of
	// its own, whose job is not pinned. Nil: no node is a part's.
	Part func(node string) string
	// Pace is how often it takes a step of its own while a pod waits for
	// its job to start, between the kicks of the pings; DefaultPace when
	// zero or less.
	Pace time.Duration
	// StatusAge is how old the plugin's answer to a status may be: a job
	// it created less than StatusAge ago reads as queued unless the
	// answer says it started, for the answer may be from before the
	// create. interLink's Slurm plugin keeps its answers 10 s
	// (DefaultStatusAge, when zero or less).
	StatusAge time.Duration
	// LostAfter is how long a job the keeper knows may be left out of the
	// plugin's answers before it reads as gone: a plugin that answers
	// from one cache for every request (interLink's Slurm plugin) leaves
	// out a pod it was not asked about when it computed the answer.
	// DefaultLostAfter when zero or less.
	LostAfter time.Duration
	// Refusals is how many jobs of a pod the backend may refuse (a create
	// that made none, a job cancelled before it ran) before the pod fails
	// with the backend's words; DefaultRefusals when zero or less.
	Refusals int
	// Data returns the source of what the pods bound to node use from the
	// cluster, read as node (poddata.NodeSource), sent with their
	// creates. Nil: nothing is read, and pods are sent as they are.
	Data func(node string) (poddata.Source, error)
	// Events returns the recorder of what a pod is told, from the node it
	// is on or is allocated (the event's source host); nil tells nothing.
	Events func(node string) record.EventRecorder
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// DefaultPace is [Config.Pace] when it is not set: a pod binds within a
// second or so of its job's start, for one status request a second while
// pods wait, and none while none does.
const DefaultPace = time.Second

// DefaultStatusAge is [Config.StatusAge] when it is not set: the age of
// the answers of interLink's Slurm plugin, which keeps one for 10 s.
const DefaultStatusAge = 10 * time.Second

// DefaultLostAfter is [Config.LostAfter] when it is not set: six times
// the Slurm plugin's cache.
const DefaultLostAfter = time.Minute

// DefaultRefusals is [Config.Refusals] when it is not set.
const DefaultRefusals = 3

// maxRefusal is the most bytes of the backend's words a record keeps.
const maxRefusal = 512
