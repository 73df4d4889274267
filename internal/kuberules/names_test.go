package kuberules

import (
	"strings"
	"testing"
)

// TestDNSLabelProblem pins the words of the DNS label check that part
// names and device group names share, each with its own maximum.
func TestDNSLabelProblem(t *testing.T) {
	const notALabel = "must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit"
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"ok", dnsLabelProblem("a-1", 3), ""},
		{"empty", dnsLabelProblem("", 3), "must not be empty"},
		{"too long", dnsLabelProblem("abcd", 3), "must be at most 3 characters"},
		{"too long before not a label", dnsLabelProblem("ABCD", 3), "must be at most 3 characters"},
		{"upper case", dnsLabelProblem("A1", 3), notALabel},
		{"dash first", dnsLabelProblem("-a", 3), notALabel},

		{"part of 63", PartNameProblem(strings.Repeat("a", 63)), ""},
		{"part empty", PartNameProblem(""), "must not be empty"},
		{"part of 64", PartNameProblem(strings.Repeat("a", 64)), "must be at most 63 characters"},
		{"part dot", PartNameProblem("rack.1"), notALabel},
		{"group of 56", DeviceGroupNameProblem(strings.Repeat("a", 56)), ""},
		{"group of 57", DeviceGroupNameProblem(strings.Repeat("a", 57)), "must be at most 56 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}
