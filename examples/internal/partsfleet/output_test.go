package partsfleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestJobOfEcho: a shell's -c script of sleeps, echoes of plain words
// and a last exit ends when it has slept its sleeps, with the exit's
// code (0 without one), and writes each echo's words, joined by one
// space, after the sleeps before it; an echo with an option, a quote, a
// variable, a glob, a redirection or a second line, and an exit before
// another step, make a script that runs until deleted.
func TestJobOfEcho(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		script string
		sleep  time.Duration
		code   int32
		echoes []Echo
		sleeps bool
	}{
		{"the brief's", "echo hello; sleep 2; echo bye; exit 3", 2 * s, 3, []Echo{{0, "hello"}, {2 * s, "bye"}}, true},
		{"echo alone", "echo hi", 0, 0, []Echo{{0, "hi"}}, true},
		{"echo, then exit", "echo 1; exit 3", 0, 3, []Echo{{0, "1"}}, true},
		{"sleep, then echo", "sleep 60; echo done", time.Minute, 0, []Echo{{time.Minute, "done"}}, true},
		{"an empty line", "echo; sleep 1", s, 0, []Echo{{0, ""}}, true},
		{"words joined by one space", "echo  a \t b,c=d:e/f.g@h%i+j-k_l", 0, 0, []Echo{{0, "a b,c=d:e/f.g@h%i+j-k_l"}}, true},
		{"a later -", "echo a -n", 0, 0, []Echo{{0, "a -n"}}, true},
		{"&& and ; mixed", "echo a && sleep 1; sleep 2 && echo b&&exit 0", 3 * s, 0, []Echo{{0, "a"}, {3 * s, "b"}}, true},
		{"a blank line before a step", "sleep 1;\n echo a", s, 0, []Echo{{s, "a"}}, true},
		{"two sleeps add up", "sleep 1; sleep 2", 3 * s, 0, nil, true},

		{"an option", "echo -n hi", 0, 0, nil, false},
		{"quotes", `echo "hello world"`, 0, 0, nil, false},
		{"a variable", "echo $HOME", 0, 0, nil, false},
		{"a glob", "echo *", 0, 0, nil, false},
		{"a redirection", "echo hi > out", 0, 0, nil, false},
		{"a comment", "echo hi # there", 0, 0, nil, false},
		{"two lines in one step", "echo a\necho b", 0, 0, nil, false},
		{"a pipe", "echo a | cat", 0, 0, nil, false},
		{"in the background", "echo a & sleep 1", 0, 0, nil, false},
		{"exit before an echo", "exit 0; echo a", 0, 0, nil, false},
		{"an empty step", "echo a;; exit 1", 0, 0, nil, false},
		{"another command", "echo a; date", 0, 0, nil, false},
		{"sleeps past a duration", "sleep 4294967295; sleep 4294967295; sleep 4294967295", 0, 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{}
			p.Spec.Containers = []corev1.Container{{Name: "main", Command: []string{"/bin/sh", "-c", tt.script}}}
			j := JobOf(p)
			if j.Sleeps != tt.sleeps || j.Sleep != tt.sleep || j.ExitCode != tt.code {
				t.Errorf("JobOf: ends by itself %v, after %v, exit code %d; want %v, after %v, exit code %d", j.Sleeps, j.Sleep, j.ExitCode, tt.sleeps, tt.sleep, tt.code)
			}
			if diff := cmp.Diff(tt.echoes, j.Echoes); diff != "" {
				t.Errorf("JobOf: echoes (-want +got):\n%s", diff)
			}
		})
	}
}

// echoer is a pod of the brief's script on node: hello at once, bye
// after 2 seconds, then exit 3; its containers main and side.
func echoer(uid, node string, cpus int) Job {
	p := &corev1.Pod{}
	p.UID, p.Spec.NodeName = "u", node
	p.Spec.Containers = []corev1.Container{{Name: "main", Command: []string{"sh", "-c", "echo hello; sleep 2; echo bye; exit 3"}}, {Name: "side"}}
	j := JobOf(p)
	j.UID, j.CPUs = uid, cpus
	return j
}

// TestOutput: the first container writes each line when its job has
// run the sleeps before it, by the fleet's clock, and no more once the
// job ended; another container of the pod has started but writes
// nothing; a name the pod has not, a queued job and a job cancelled
// before a line have written nothing of it; a deleted pod has no output.
func TestOutput(t *testing.T) {
	f, c := fleetWith(0)
	f.Create(echoer("a", "cn001", 8))
	f.Create(echoer("b", "cn001", 8)) // queues behind a
	hello := Line{Time: t0, Text: "hello"}
	steps := []struct {
		name      string
		at        time.Duration
		uid, ctr  string
		want      Output
		wantFound bool
	}{
		{"at the start", 0, "a", "main", Output{Lines: []Line{hello}, Container: true, Started: true, State: Running}, true},
		{"before bye", 1999 * time.Millisecond, "a", "main", Output{Lines: []Line{hello}, Container: true, Started: true, State: Running}, true},
		{"the other container", time.Second, "a", "side", Output{Container: true, Started: true, State: Running}, true},
		{"a name the pod has not", time.Second, "a", "gone", Output{State: Running}, true},
		{"queued", time.Second, "b", "main", Output{Container: true, State: Queued}, true},
		{"never created", time.Second, "c", "main", Output{}, false},
		{"at its end", 2 * time.Second, "a", "main", Output{Lines: []Line{hello, {Time: t0.Add(2 * time.Second), Text: "bye"}}, Container: true, Started: true, Ended: true, State: Failed}, true},
		{"long after", time.Hour, "a", "main", Output{Lines: []Line{hello, {Time: t0.Add(2 * time.Second), Text: "bye"}}, Container: true, Started: true, Ended: true, State: Failed}, true},
		{"the next, started when a ended", time.Hour, "b", "main", Output{Lines: []Line{{Time: t0.Add(2 * time.Second), Text: "hello"}, {Time: t0.Add(4 * time.Second), Text: "bye"}}, Container: true, Started: true, Ended: true, State: Failed}, true},
	}
	for _, s := range steps {
		c.now = t0.Add(s.at)
		got, ok := f.Output(s.uid, s.ctr)
		if diff := cmp.Diff(s.want, got); diff != "" || ok != s.wantFound {
			t.Errorf("%s: Output(%s, %s) found %v, want %v (-want +got):\n%s", s.name, s.uid, s.ctr, ok, s.wantFound, diff)
		}
	}

	t.Run("cancelled before a line", func(t *testing.T) {
		f, c := fleetWith(0)
		f.Create(echoer("a", "cn001", 1))
		f.Create(echoer("d", "cn001", 1))
		c.now = t0.Add(time.Second)
		f.Cancel("job-1")
		c.now = t0.Add(time.Hour)
		want := Output{Lines: []Line{{Time: t0, Text: "hello"}}, Container: true, Started: true, Ended: true, State: Cancelled}
		if got, _ := f.Output("a", "main"); !cmp.Equal(want, got) {
			t.Errorf("cancelled at 1s: %+v, want %+v", got, want)
		}
		f.Delete("d")
		if got, ok := f.Output("d", "main"); ok {
			t.Errorf("deleted: %+v, found; want none", got)
		}
	})
	t.Run("timed out before a line", func(t *testing.T) {
		f, c := slurmWith(0)
		j := echoer("a", "", 1)
		j.Echoes = append(j.Echoes, Echo{After: 2 * time.Minute, Text: "late"})
		j.Sleep, j.TimeLimit = 3*time.Minute, time.Minute
		f.Create(j)
		c.now = t0.Add(time.Hour)
		got, _ := f.Output("a", "main")
		if len(got.Lines) != 2 || got.State != TimedOut {
			t.Errorf("timed out at 1m: %+v; want hello and bye, not the line at 2m", got)
		}
	})
}
