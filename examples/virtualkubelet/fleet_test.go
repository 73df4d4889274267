package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

func TestFleet(t *testing.T) {
	base := vnode.Config{Interval: time.Second, StaticKeys: []string{vnode.StaticTaintKey}}
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
