package flagdoc_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pingnode/pingnode/examples/internal/flagdoc"
)

func ExampleTable() {
	fs := flag.NewFlagSet("provider", flag.ContinueOnError)
	fs.Duration("interval", 5*time.Second, "how often the plugin is pinged")
	fs.Duration("timeout", 3*time.Second, "how long one ping may take; less than -interval (-verbose is not a flag)")
	fs.String("kubeconfig", "", "the cluster's kubeconfig `file`; not given: $KUBECONFIG")
	fs.Bool("held", true, "add what the node's pods hold | or not")
	fmt.Print(flagdoc.Table(fs))
	// Output:
	// | flag | default | what it does |
	// |---|---|---|
	// | `-held` | `true` | add what the node's pods hold \| or not |
	// | `-interval duration` | `5s` | how often the plugin is pinged |
	// | `-kubeconfig file` |  | the cluster's kubeconfig file; not given: $KUBECONFIG |
	// | `-timeout duration` | `3s` | how long one ping may take; less than `-interval` (-verbose is not a flag) |
}

// TestReplace: the table goes between the markers, and all else is kept;
// a marker missing, repeated or out of order is an error that names it.
func TestReplace(t *testing.T) {
	const table = "| flag |\n|---|\n| `-a` |\n"
	doc := func(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
	for _, tt := range []struct {
		name, readme, want, err string
	}{
		{
			name:   "replaced",
			readme: doc("# Flags", flagdoc.Begin, "| old |", flagdoc.End, "after"),
			want:   doc("# Flags", flagdoc.Begin, strings.TrimSuffix(table, "\n"), flagdoc.End, "after"),
		},
		{
			name:   "empty between",
			readme: doc(flagdoc.Begin, flagdoc.End),
			want:   doc(flagdoc.Begin, strings.TrimSuffix(table, "\n"), flagdoc.End),
		},
		{name: "no begin", readme: doc("| old |", flagdoc.End), err: "no line"},
		{name: "no end", readme: doc(flagdoc.Begin, "| old |"), err: "no line"},
		{name: "begin twice", readme: doc(flagdoc.Begin, flagdoc.Begin, flagdoc.End), err: "twice"},
		{name: "end first", readme: doc(flagdoc.End, flagdoc.Begin), err: "before"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := flagdoc.Replace([]byte(tt.readme), table)
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one that says %q", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			case string(got) != tt.want:
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
