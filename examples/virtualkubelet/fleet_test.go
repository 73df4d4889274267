package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFleet(t *testing.T) {
	base := Config{Interval: time.Second, StaticKeys: []string{StaticTaintKey}}
	tests := []struct {
		name         string
		n            int
		node, plugin string
		want         [][2]string // node name and plugin URL of each
		wantErr      bool
	}{
		{"one node, patterns as they are", 1, "vk", "http://127.0.0.1:4000/status", [][2]string{{"vk", "http://127.0.0.1:4000/status"}}, false},
		{"the index in the name and the path", 3, "vk-{i}", "http://127.0.0.1:4000/status/{i}", [][2]string{
			{"vk-0", "http://127.0.0.1:4000/status/0"}, {"vk-1", "http://127.0.0.1:4000/status/1"}, {"vk-2", "http://127.0.0.1:4000/status/2"},
		}, false},
		{"one plugin for all, percent-escapes kept", 2, "vk-{i}", "http://127.0.0.1:4000/status?site=a%2Fb", [][2]string{
			{"vk-0", "http://127.0.0.1:4000/status?site=a%2Fb"}, {"vk-1", "http://127.0.0.1:4000/status?site=a%2Fb"},
		}, false},
		{"one node, its index", 1, "vk-{i}", "http://127.0.0.1:4000/status/{i}", [][2]string{{"vk-0", "http://127.0.0.1:4000/status/0"}}, false},
		{"no index in the name of many", 2, "vk", "http://127.0.0.1:4000/status/{i}", nil, true},
		{"no node", 0, "vk", "http://127.0.0.1:4000/status", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configs, err := Fleet(tt.n, tt.node, tt.plugin, base)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Fleet: %v, want an error: %v", err, tt.wantErr)
			}
			var got [][2]string
			for _, c := range configs {
				got = append(got, [2]string{c.Static.Name, c.PluginURL})
				if c.Interval != base.Interval || len(c.StaticKeys) != 1 || c.Static.Labels["kubernetes.io/hostname"] != c.Static.Name {
					t.Errorf("%s: %+v, want base's settings on its own static node", c.Static.Name, c)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLease(t *testing.T) {
	tests := []struct {
		name            string
		duration, renew time.Duration
		wantSeconds     int32
		wantRenew       time.Duration
		wantErr         bool
	}{
		{"the kubelet's by default", 0, 0, 40, 10 * time.Second, false},
		{"a quarter of the duration", 4 * time.Second, 0, 4, time.Second, false},
		{"given", 40 * time.Second, 500 * time.Millisecond, 40, 500 * time.Millisecond, false},
		{"not whole seconds", 1500 * time.Millisecond, 0, 0, 0, true},
		{"renewed no sooner than it ends", 10 * time.Second, 10 * time.Second, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{LeaseDuration: tt.duration, LeaseRenew: tt.renew}
			seconds, renew, err := c.lease()
			if (err != nil) != tt.wantErr || seconds != tt.wantSeconds || renew != tt.wantRenew {
				t.Errorf("lease() = %d, %s, %v; want %d, %s, an error: %v", seconds, renew, err, tt.wantSeconds, tt.wantRenew, tt.wantErr)
			}
		})
	}
}

// TestReportJitter: after a start or a change, the next status report
// falls anywhere within half the interval either way of it; after a
// report, exactly one interval later.
func TestReportJitter(t *testing.T) {
	const interval = 5 * time.Minute
	p := &Provider{cfg: Config{StatusReport: interval}}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	lowest, highest := time.Duration(1<<62), time.Duration(0)
	for range 1000 {
		p.reportAfter(now, true)
		d := p.reportDue.Sub(now)
		lowest, highest = min(lowest, d), max(highest, d)
	}
	if lowest < interval/2 || highest >= 3*interval/2 || highest-lowest < interval*9/10 {
		t.Errorf("after a change, reports from %s to %s later: want them spread over [%s, %s)", lowest, highest, interval/2, 3*interval/2)
	}
	p.reportAfter(now, false)
	if d := p.reportDue.Sub(now); d != interval {
		t.Errorf("after a report, the next %s later, want %s", d, interval)
	}
}
