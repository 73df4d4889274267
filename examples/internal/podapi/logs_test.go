package podapi

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tailFive is what interLink's Virtual Kubelet sends for kubectl logs
// --tail 5 job-1 -n team-a, the pod of the other fixtures.
var tailFive = LogRequest{
	Namespace:     "team-a",
	PodUID:        "0b6c1f52-5d3e-4f7a-9d7e-2f1a8c9e4b10",
	PodName:       "job-1",
	ContainerName: "main",
	Opts:          LogOptions{Tail: 5},
}

// TestLogRequestFixture: logs.request.json decodes into LogRequest with
// no field left over, and is, byte for byte, json.Marshal of the request
// of kubectl logs --tail 5: the bytes that interLink's Virtual Kubelet
// and its API, which both marshal a LogStruct, send.
func TestLogRequestFixture(t *testing.T) {
	data := fixture(t, "logs.request.json")
	var got LogRequest
	strict(t, data, &got)
	if diff := cmp.Diff(tailFive, got); diff != "" {
		t.Errorf("logs.request.json decoded (-want +got):\n%s", diff)
	}
	marshalled, err := json.Marshal(tailFive)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.TrimSuffix(data, []byte("\n")); !bytes.Equal(marshalled, want) {
		t.Errorf("json.Marshal of the request:\n%s\nwant logs.request.json:\n%s", marshalled, want)
	}
}

// TestLogOptionsOfKubectl: the options that interLink's Virtual Kubelet
// sends for kubectl logs' flags, each a query parameter of the kubelet
// API (the API server's pod LogLocation), which the Virtual Kubelet
// library parses (node/api/logs.go, parseLogOptions) and interLink
// converts as they are; every field is always sent, a zero for a flag
// not given, and the JSON name of LimitBytes is "Bytes".
func TestLogOptionsOfKubectl(t *testing.T) {
	const zero = `"Tail":0,"Bytes":0,"Timestamps":false,"Follow":false,"Previous":false,"SinceSeconds":0,"SinceTime":"0001-01-01T00:00:00Z"`
	for _, tt := range []struct {
		name string
		opts LogOptions
		want string
	}{
		{"no flag", LogOptions{}, `{` + zero + `}`},
		{"--tail 5", LogOptions{Tail: 5}, `{"Tail":5,"Bytes":0,"Timestamps":false,"Follow":false,"Previous":false,"SinceSeconds":0,"SinceTime":"0001-01-01T00:00:00Z"}`},
		{"--since 10s", LogOptions{SinceSeconds: 10}, `{"Tail":0,"Bytes":0,"Timestamps":false,"Follow":false,"Previous":false,"SinceSeconds":10,"SinceTime":"0001-01-01T00:00:00Z"}`},
		{"-f", LogOptions{Follow: true}, `{"Tail":0,"Bytes":0,"Timestamps":false,"Follow":true,"Previous":false,"SinceSeconds":0,"SinceTime":"0001-01-01T00:00:00Z"}`},
		{"--limit-bytes 100 --timestamps", LogOptions{LimitBytes: 100, Timestamps: true}, `{"Tail":0,"Bytes":100,"Timestamps":true,"Follow":false,"Previous":false,"SinceSeconds":0,"SinceTime":"0001-01-01T00:00:00Z"}`},
		{"--since-time, in whole seconds", LogOptions{SinceTime: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}, `{"Tail":0,"Bytes":0,"Timestamps":false,"Follow":false,"Previous":false,"SinceSeconds":0,"SinceTime":"2024-05-01T12:00:00Z"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("marshalled (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLogTimestamp: a stamp is always 9 digits of nanoseconds wide, as
// a kubelet writes it, where time.RFC3339Nano drops trailing zeros.
func TestLogTimestamp(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 500_000_000, time.UTC)
	if got, want := at.Format(LogTimestamp), "2024-05-01T12:00:00.500000000Z"; got != want {
		t.Errorf("Format(LogTimestamp) = %s, want %s", got, want)
	}
	if got := at.Format(time.RFC3339Nano); got == at.Format(LogTimestamp) {
		t.Errorf("RFC3339Nano gives %s too: the test shows nothing", got)
	}
}
