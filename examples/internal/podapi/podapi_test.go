package podapi

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// The fixtures in testdata/ are the bytes of each call as interLink's
// types (pkg/interlink/types.go at f6321757) marshal them, written by hand
// from those types and the calls that send them: the ping's body, one
// PodCreateRequests, the answer CreateStruct (and an older plugin's list
// of them), a status request of whole pods, the Slurm plugin's answer
// (pkg/slurm/Status.go at f8451d9: PD waiting, R running, CD terminated
// after a start, a job cancelled before it started terminated with exit
// code 15 and no start, and a pod it does not know with an empty state),
// and a delete of one pod.

// Fixture returns the bytes of a fixture of the wire, for the tests of
// the client and of the sample plugin too.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// strict decodes data into v and fails on a field that v has not.
func strict(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding into %T: %v", v, err)
	}
}

// TestFixturesAreTheTypes: each fixture decodes into its type with no
// field left over, and the type marshals it back to the same JSON: the
// types are the wire, key for key.
func TestFixturesAreTheTypes(t *testing.T) {
	for _, tt := range []struct {
		file string
		v    any
	}{
		{"ping.request.json", &[]corev1.Pod{}},
		{"create.request.json", &CreateRequest{}},
		{"create.answer.json", &Created{}},
		{"create.answer-list.json", &[]Created{}},
		{"status.request.json", &[]corev1.Pod{}},
		{"status.answer.json", &[]PodStatus{}},
		{"delete.request.json", &corev1.Pod{}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data := fixture(t, tt.file)
			strict(t, data, tt.v)
			again, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(SameJSON(t, data), SameJSON(t, again)); diff != "" {
				t.Errorf("%s marshalled again (-fixture +marshalled):\n%s", tt.file, diff)
			}
		})
	}
	if got := string(bytes.TrimSpace(fixture(t, "ping.request.json"))); got != PingBody {
		t.Errorf("ping.request.json = %s; PingBody = %s", got, PingBody)
	}
}

// SameJSON returns data decoded as plain JSON values, for a comparison
// of two encodings, with what an older apimachinery writes of an object
// without a creation time ("creationTimestamp": null) left out.
func SameJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, data)
	}
	return dropNullCreation(v)
}

func dropNullCreation(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if c, ok := v["creationTimestamp"]; ok && c == nil {
			delete(v, "creationTimestamp")
		}
		for k, e := range v {
			v[k] = dropNullCreation(e)
		}
	case []any:
		for i, e := range v {
			v[i] = dropNullCreation(e)
		}
	}
	return v
}

// TestDecodeCreated: one object, as interLink's plugins answer; a list,
// as older plugins did, said so; another pod's job, or no JSON, refused.
func TestDecodeCreated(t *testing.T) {
	const uid = "0b6c1f52-5d3e-4f7a-9d7e-2f1a8c9e4b10"
	want := Created{PodUID: uid, PodJID: "1001"}
	for _, tt := range []struct {
		name     string
		answer   string
		want     Created
		wantList bool
		wantErr  bool
	}{
		{name: "object", answer: string(fixture(t, "create.answer.json")), want: want},
		{name: "list", answer: string(fixture(t, "create.answer-list.json")), want: want, wantList: true},
		{name: "list of two", answer: `[{"PodUID":"other","PodJID":"7"},{"PodUID":"` + uid + `","PodJID":"1001"}]`, want: want, wantList: true},
		{name: "object without a UID", answer: `{"PodJID":"1001"}`, want: Created{PodJID: "1001"}},
		{name: "another pod", answer: `{"PodUID":"other","PodJID":"7"}`, wantErr: true},
		{name: "list without the pod", answer: `[{"PodUID":"other","PodJID":"7"}]`, wantList: true, wantErr: true},
		{name: "empty list", answer: `[]`, wantList: true, wantErr: true},
		{name: "not JSON", answer: `Submitted batch job 1001`, wantErr: true},
		{name: "empty", answer: ``, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, list, err := DecodeCreated([]byte(tt.answer), uid)
			if (err != nil) != tt.wantErr || list != tt.wantList || got != tt.want {
				t.Errorf("DecodeCreated(%s) = %+v, %v, %v; want %+v, %v, error %v", tt.answer, got, list, err, tt.want, tt.wantList, tt.wantErr)
			}
		})
	}
}
