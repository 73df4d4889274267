// Package flagdoc derives a README's table of flags from the flag set
// itself, so that each flag is described once, in its help text, and the
// table cannot drift from it. A program's test renders the table with
// [Table], puts it between the README's markers with [Replace], and fails
// when the README differs (or, asked to, writes it).
//
// A row is the flag as -help shows it (its name, and the value's name
// that the help text's backquotes give, as [flag.UnquoteUsage] reads
// them), its default, and its help text. An empty default leaves the cell
// empty, as -help omits a zero default: the help text says what not
// giving the flag means. A -name in a help text that is a flag of the set
// is written as code.
package flagdoc

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Begin and End are the lines that hold the table in a README; what is
// between them is [Table]'s.
const (
	Begin = "<!-- flags: derived from the flag set; edit the help texts, then run the README's test with -update -->"
	End   = "<!-- end of flags -->"
)

// flagWord is a word that may name a flag: a dash and a name, after a
// space, a parenthesis or the start of the text.
var flagWord = regexp.MustCompile(`(^|[\s(])-([a-z][a-z0-9-]*[a-z0-9])`)

// Table is the Markdown table of fs's flags, in the order -help gives
// them (by name).
func Table(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| flag | default | what it does |\n|---|---|---|\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		head := "-" + f.Name
		if name != "" {
			head += " " + name
		}
		def := ""
		if f.DefValue != "" {
			def = code(f.DefValue)
		}
		usage = flagWord.ReplaceAllStringFunc(usage, func(w string) string {
			m := flagWord.FindStringSubmatch(w)
			if fs.Lookup(m[2]) == nil {
				return w
			}
			return m[1] + code("-"+m[2])
		})
		fmt.Fprintf(&b, "| %s | %s | %s |\n", code(head), def, cell(usage))
	})
	return b.String()
}

// code is s as Markdown code.
func code(s string) string { return "`" + s + "`" }

// cell is s made safe in a table's cell: a pipe escaped, lines joined.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// Replace is readme with what is between the lines [Begin] and [End]
// replaced by table. The error says which marker is missing or repeated.
func Replace(readme []byte, table string) ([]byte, error) {
	lines := bytes.SplitAfter(readme, []byte("\n"))
	begin, end := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(string(l)) {
		case Begin:
			if begin >= 0 {
				return nil, fmt.Errorf("the line %q twice", Begin)
			}
			begin = i
		case End:
			if end >= 0 {
				return nil, fmt.Errorf("the line %q twice", End)
			}
			end = i
		}
	}
	switch {
	case begin < 0:
		return nil, fmt.Errorf("no line %q", Begin)
	case end < 0:
		return nil, fmt.Errorf("no line %q", End)
	case end < begin:
		return nil, fmt.Errorf("the line %q before %q", End, Begin)
	}
	var out bytes.Buffer
	for _, l := range lines[:begin+1] {
		out.Write(l)
	}
	out.WriteString(table)
	for _, l := range lines[end:] {
		out.Write(l)
	}
	return out.Bytes(), nil
}

// Golden holds the README at path to fs's table of flags: tb fails when
// what is between its markers is not [Table]'s, and with update the
// README is written with it.
func Golden(tb testing.TB, path string, fs *flag.FlagSet, update bool) {
	tb.Helper()
	readme, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	want, err := Replace(readme, Table(fs))
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	switch {
	case update:
		if err := os.WriteFile(path, want, 0o644); err != nil {
			tb.Fatal(err)
		}
	case !bytes.Equal(want, readme):
		tb.Errorf("%s: the table of flags is not the flag set's; the test with -update writes it. The flag set's:\n%s", path, Table(fs))
	}
}
