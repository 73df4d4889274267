package devicepool_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// drawPool draws a pool as a provider might hand it over: in any order,
// with names of its groups and others, held or not, described or not,
// sometimes a name twice.
func drawPool(t *rapid.T) []devicepool.Device {
	names := rapid.SliceOfN(rapid.SampledFrom([]string{
		"a-0", "a-1", "a-2", "a-3", "a-7", "a-1-0", "a-1-1", "b-0", "b-2", "c-0", "a-01", "a", "b-x",
	}), 0, 8).Draw(t, "pool")
	pool := make([]devicepool.Device, len(names))
	for i, name := range names {
		pool[i] = devicepool.Device{Name: name, Held: rapid.Bool().Draw(t, "held"), Running: rapid.Bool().Draw(t, "running")}
		if rapid.Bool().Draw(t, "described") {
			product := rapid.SampledFrom([]string{"x", "y"}).Draw(t, "product")
			pool[i].Attributes = map[string]pingstatus.DeviceAttribute{"product": {StringValue: &product}}
			pool[i].Capacity = map[string]resource.Quantity{"memory": resource.MustParse("1Gi")}
		}
	}
	if rapid.Bool().Draw(t, "sorted") {
		slices.SortFunc(pool, devicepool.Compare)
	}
	return pool
}

// drawPing draws a ping for the pool: answered or failed, a reply parsed
// from a body or built by hand (gen.PatchDevices), or none, on either basis.
func drawPing(t *rapid.T) nodeapply.Ping {
	var ping nodeapply.Ping
	if rapid.IntRange(0, 5).Draw(t, "failed") == 0 {
		ping.Failure = "HTTP 500"
	}
	switch rapid.IntRange(0, 4).Draw(t, "reply") {
	case 0:
	case 1:
		patch, _ := pingstatus.Parse(gen.ReplyBody().Draw(t, "reply body"), pingstatus.Options{})
		ping.Reply = &patch
	default:
		patch := &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceDevices: rapid.IntRange(0, 4).Draw(t, "devices") > 0}
		patch.Basis = rapid.SampledFrom([]pingstatus.Basis{"", pingstatus.BasisTotal}).Draw(t, "basis")
		if patch.ReplaceDevices {
			patch.Devices, patch.KeptDeviceGroups = gen.PatchDevices(t)
		}
		ping.Reply = patch
	}
	return ping
}

// devicePath returns the name in a change's path, devices[name].
func devicePath(path string) (string, bool) {
	name, ok := strings.CutPrefix(path, "devices[")
	if !ok || !strings.HasSuffix(name, "]") {
		return "", false
	}
	return strings.TrimSuffix(name, "]"), true
}

// TestPropertyChangesAreOfDevices holds a Result to rule pool-order, for any pool
// as a provider might hand it over and any ping: every change is of a
// device (SubjectDevice, path devices[name]), sorted by path, each name
// once; an added device is in the pool after and in none before, a
// removed one the reverse, a modified one in both; every warning is of
// the reply's devices (SubjectDevice, path patch.devices...); no change
// means the pool itself back, and a change a pool after sorted by
// Compare, each name once and valid, which the same ping again leaves as
// it is, no change, the same list; a failed ping, no reply and a reply
// without devices leave the pool as it is, with no warning. Apply never
// modifies the pool it is given.
func TestPropertyChangesAreOfDevices(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := drawPool(t)
		ping := drawPing(t)
		before := slices.Clone(pool)
		res := devicepool.Apply(pool, ping, pingstatus.Options{})
		if !reflect.DeepEqual(before, pool) {
			t.Fatalf("Apply modified the pool: %v, was %v", names(pool), names(before))
		}
		if !ping.Reached() || ping.Reply == nil || !ping.Reply.ReplaceDevices {
			if len(res.Changes) != 0 || len(res.Warnings) != 0 || !samePool(res.Devices, pool) {
				t.Fatalf("no devices to publish, but changes %v, warnings %v, pool %v", res.Changes, res.Warnings, names(res.Devices))
			}
			return
		}
		for i, c := range res.Changes {
			name, ok := devicePath(c.Path)
			if c.Subject != pingstatus.SubjectDevice || !ok {
				t.Fatalf("change %q: subject %v, not of a device", c, c.Subject)
			}
			if i > 0 && res.Changes[i-1].Path >= c.Path {
				t.Fatalf("changes not sorted by path, each once: %v", res.Changes)
			}
			inBefore := slices.ContainsFunc(pool, func(d devicepool.Device) bool { return d.Name == name })
			inAfter := slices.ContainsFunc(res.Devices, func(d devicepool.Device) bool { return d.Name == name })
			if want := (c.Op == nodeapply.Added) == !inBefore && (c.Op == nodeapply.Removed) == !inAfter; !want {
				t.Fatalf("change %q (%v): in the pool before %v, after %v", c, c.Op, inBefore, inAfter)
			}
		}
		for _, w := range res.Warnings {
			if w.Subject != pingstatus.SubjectDevice || !strings.HasPrefix(w.Path, "patch.devices") {
				t.Fatalf("warning %q is about %v, not the reply's devices", w, w.Subject)
			}
		}
		if len(res.Changes) == 0 {
			if !samePool(res.Devices, pool) {
				t.Fatalf("no change, but not the pool back: %v, was %v", names(res.Devices), names(pool))
			}
			return
		}
		for i, d := range res.Devices {
			if _, _, ok := kuberules.SplitDeviceName(d.Name); !ok {
				t.Fatalf("device %q published: not group-index", d.Name)
			}
			if i > 0 && devicepool.Compare(res.Devices[i-1], d) >= 0 {
				t.Fatalf("pool after not sorted, each name once: %v", names(res.Devices))
			}
		}
		again := devicepool.Apply(res.Devices, ping, pingstatus.Options{})
		if len(again.Changes) != 0 || !samePool(again.Devices, res.Devices) {
			t.Fatalf("the same ping again changes %v", again.Changes)
		}
	})
}

// samePool reports whether a is b itself: the same list, not a copy.
func samePool(a, b []devicepool.Device) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
