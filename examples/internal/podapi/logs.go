package podapi

import "time"

// LogsPath is the path of the log of a container, beside the ping's
// /status: GET with one [LogRequest] as JSON, answered 200 with the log
// as plain text, which the answer streams with Opts.Follow.
const LogsPath = "/getLogs"

// LogTimestamp is the layout of the time that begins each line of a log
// asked with Opts.Timestamps, and a space after it, as a kubelet writes
// it (k8s.io/kubernetes pkg/kubelet/kuberuntime/logs/logs.go,
// timeFormatOut, which is pkg/kubelet/types' RFC3339NanoFixed):
// time.RFC3339Nano with its nanoseconds always 9 digits, so that every
// stamp has the same width (2024-05-01T12:00:00.500000000Z).
const LogTimestamp = "2006-01-02T15:04:05.000000000Z07:00"

// LogRequest asks the log of one container (interLink's LogStruct,
// pkg/interlink/types.go at f6321757). interLink's Virtual Kubelet
// builds it in its GetLogs (pkg/virtualkubelet/virtualkubelet.go) from
// what the kubelet API was asked, /containerLogs/<namespace>/<pod>/
// <container>: the pod's UID it reads from the API server, and Opts
// converted field for field from the Virtual Kubelet library's
// ContainerLogOpts (node/api/logs.go, parseLogOptions). It sends it with
// GET and no deadline (pkg/virtualkubelet/execute.go, LogRetrieval), and
// interLink's API, which refuses Tail with LimitBytes and SinceSeconds
// with SinceTime (400), forwards it to the plugin as it decoded it
// (pkg/interlink/api/logs.go): both send json.Marshal's bytes of it, as
// testdata/logs.request.json holds them.
type LogRequest struct {
	Namespace     string     `json:"Namespace"`
	PodUID        string     `json:"PodUID"`
	PodName       string     `json:"PodName"`
	ContainerName string     `json:"ContainerName"`
	Opts          LogOptions `json:"Opts"`
}

// LogOptions is how a log is asked (interLink's ContainerLogOpts), each
// from a query parameter of the kubelet API, itself from kubectl logs'
// flags through the API server's pod log location. A zero is a parameter
// not given: the Virtual Kubelet library refuses a limitBytes or
// sinceSeconds below 1, and reads tailLines=0 as 0, so that kubectl logs
// --tail 0 asks the whole log here, where a kubelet writes no line.
type LogOptions struct {
	// Tail is how many lines from the end (tailLines, --tail); 0 is all.
	Tail int `json:"Tail"`
	// LimitBytes is how many bytes at most (limitBytes, --limit-bytes);
	// 0 is no limit. Its JSON name is "Bytes".
	LimitBytes int `json:"Bytes"`
	// Timestamps asks each line to begin with its time ([LogTimestamp])
	// and a space (timestamps, --timestamps).
	Timestamps bool `json:"Timestamps"`
	// Follow asks the log to stream until the container ends (follow,
	// -f): one answer, written as the container writes.
	Follow bool `json:"Follow"`
	// Previous asks the log of the container's previous instance
	// (previous, -p).
	Previous bool `json:"Previous"`
	// SinceSeconds asks the lines of the last so many seconds
	// (sinceSeconds, --since 10s); 0 is all.
	SinceSeconds int `json:"SinceSeconds"`
	// SinceTime asks the lines from that time on (sinceTime,
	// --since-time, which the API server sends in whole seconds,
	// time.RFC3339); the zero time, which marshals as
	// "0001-01-01T00:00:00Z", is all.
	SinceTime time.Time `json:"SinceTime"`
}
