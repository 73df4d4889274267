package nodeapply_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// sizedReply is a reply of a backend with cpu, memory and a taint, and n
// labels or, with devices, two groups of 32 GPUs.
func sizedReply(labels int, devices bool) []byte {
	var b strings.Builder
	b.WriteString(`{"status":"ok","resources":{"cpu":"64","memory":"250000Mi","pods":"110"},"taints":[{"key":"vendor.example.com/maintenance","value":"soon","effect":"PreferNoSchedule"}]`)
	if labels > 0 {
		b.WriteString(`,"labels":{`)
		for i := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"feature.node.kubernetes.io/l%d":"v%d"`, i, i)
		}
		b.WriteString("}")
	}
	if devices {
		b.WriteString(`,"devices":[` +
			`{"name":"a100","count":32,"attributes":{"productName":{"string":"NVIDIA A100-SXM4-80GB"},"type":{"string":"gpu"},"cudaComputeCapability":{"version":"8.0.0"}},"capacity":{"memory":{"value":"80Gi"}}},` +
			`{"name":"t4","count":32,"attributes":{"productName":{"string":"Tesla T4"},"type":{"string":"gpu"},"cudaComputeCapability":{"version":"7.5.0"}},"capacity":{"memory":{"value":"16Gi"}}}]`)
	}
	b.WriteString("}")
	return []byte(b.String())
}

// BenchmarkSteadyPingSizes is a provider's whole ping of a steady backend
// (Parse, then the node's step and, for devices, the pool's, with the
// conditions in play) at 10 and 100 labels and with 64 devices, beside a
// bare json.Unmarshal of the same body plus one DeepCopy of the node, in
// the same run. The bound: ping at most 2.5 times unmarshal+deepcopy (rule
// merge-pure: a steady ping copies nothing).
//
//	go test ./nodeapply -run '^$' -bench SteadyPingSizes -count 10 > sizes.txt
//	benchstat -col /op sizes.txt
func BenchmarkSteadyPingSizes(b *testing.B) {
	for _, c := range []struct {
		name    string
		labels  int
		devices bool
	}{{"labels10", 10, false}, {"labels100", 100, false}, {"devices64", 0, true}} {
		body := sizedReply(c.labels, c.devices)
		at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		opts := nodeapply.Options{}
		patch, warnings := pingstatus.Parse(body, opts.Reply)
		if len(warnings) != 0 {
			b.Fatal(warnings)
		}
		ping := nodeapply.Ping{Reply: &patch, At: at}
		node, pool := nodeapply.Apply(readNode(b, "interlink-node.json"), ping, opts).Node, devicepool.Apply(nil, ping, opts.Reply).Devices
		b.Run("case="+c.name+"/op=ping", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				patch, _ := pingstatus.Parse(body, opts.Reply)
				at = at.Add(30 * time.Second)
				ping := nodeapply.Ping{Reply: &patch, At: at, Body: body}
				res := nodeapply.Apply(node, ping, opts)
				var devices devicepool.Result
				if c.devices {
					devices = devicepool.Apply(pool, ping, opts.Reply)
				}
				if len(res.Changes) != 0 || len(devices.Changes) != 0 {
					b.Fatalf("changes: %v %v", res.Changes, devices.Changes)
				}
			}
		})
		b.Run("case="+c.name+"/op=unmarshal+deepcopy", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v pingstatus.PingResponse
				if err := json.Unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
				_ = node.DeepCopy()
			}
		})
	}
}
