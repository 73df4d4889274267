package vnode

import (
	"testing"
	"time"
)

// TestReportJitter: after a start or a change, the next status report
// falls anywhere within half the interval either way of it; after a
// report, exactly one interval later.
func TestReportJitter(t *testing.T) {
	const interval = 5 * time.Minute
	p := &Node{cfg: Config{StatusReport: interval}}
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
