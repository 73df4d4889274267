package vnode

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pingnode/pingnode/pingstatus"
)

// TestWarningReason: an event's reason comes from what a warning is about
// and what was done, never from its path.
func TestWarningReason(t *testing.T) {
	tests := []struct {
		w    pingstatus.Warning
		want string
	}{
		{pingstatus.Warning{Path: "resources.cpu", Subject: pingstatus.SubjectResource, Action: pingstatus.Refused}, ReasonResourceRefused},
		{pingstatus.Warning{Path: "ping.held[cpu]", Subject: pingstatus.SubjectResource, Action: pingstatus.Refused}, ReasonResourceRefused},
		{pingstatus.Warning{Path: "spec.taints[a.io/x:NoSchedule]", Subject: pingstatus.SubjectTaint, Action: pingstatus.Repaired}, "TaintRepaired"},
		{pingstatus.Warning{Subject: pingstatus.SubjectReply, Action: pingstatus.Ignored}, "ReplyIgnored"},
		{pingstatus.Warning{Path: "metadata.annotations[pingnode.io/plugin-taints]", Subject: pingstatus.SubjectAnnotation, Action: pingstatus.Ignored}, "AnnotationIgnored"},
		{pingstatus.Warning{Path: `labels["kubernetes.io/hostname"]`, Subject: pingstatus.SubjectLabel, Action: pingstatus.Refused}, "LabelRefused"},
	}
	for _, tt := range tests {
		if got := WarningReason(tt.w); got != tt.want {
			t.Errorf("WarningReason(%q) = %q, want %q", tt.w.String(), got, tt.want)
		}
	}
}

// TestBound: a message an event shows is at most 1024 bytes, cut at a
// character's start with a marker; a shorter one is kept as it is.
func TestBound(t *testing.T) {
	short := "the plugin answered its last ping"
	if got := bound(short); got != short {
		t.Errorf("bound(%q) = %q", short, got)
	}
	long := strings.Repeat("é", 600) // 1200 bytes
	got := bound(long)
	if len(got) > maxEventMessageCharacters || !strings.HasSuffix(got, cutMarker) || !utf8.ValidString(got) {
		t.Errorf("bound of 1200 bytes: %d bytes, ends %q, valid UTF-8 %v; want at most %d, the marker, valid", len(got), got[len(got)-6:], utf8.ValidString(got), maxEventMessageCharacters)
	}
}
