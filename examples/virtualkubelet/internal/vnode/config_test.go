package vnode

import (
	"testing"
	"time"
)

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
			seconds, renew, err := c.Lease()
			if (err != nil) != tt.wantErr || seconds != tt.wantSeconds || renew != tt.wantRenew {
				t.Errorf("lease() = %d, %s, %v; want %d, %s, an error: %v", seconds, renew, err, tt.wantSeconds, tt.wantRenew, tt.wantErr)
			}
		})
	}
}
