// Command schemacheck checks plugin replies against the reply format's JSON
// Schema, [pingstatus.JSONSchema], with a real JSON Schema validator
// (draft 2020-12): a check that a plugin written in any language can run
// in its CI. Its tests hold the schema to what the library does.
//
//	cd examples/schemacheck && go run . ../../testdata/replies/slurm.json
//
// It reads each file ("-" is standard input), prints "FILE: ok" or each
// problem as "FILE: LOCATION: what is wrong", LOCATION being a JSON
// pointer into the reply, and exits with status 1 if any reply has a
// problem and 2 on a usage error (no file, a file that cannot be read). A
// UTF-8 byte order mark before the reply is ignored, as a provider
// ignores it.
//
// A reply the schema accepts is one that a provider (pingstatus.Parse)
// takes without a warning, and the other way round, field names in any
// letter case included, but for what JSONSchema's documentation lists,
// such as a key given twice. ../pingcheck runs Parse itself and shows what
// a provider would do with a reply.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/pingnode/pingnode/pingstatus"
)

// Exit statuses.
const (
	exitOK       = 0
	exitProblems = 1
	exitUsage    = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("schemacheck", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: schemacheck reply-file|- ...")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return exitUsage
	}
	if flags.NArg() == 0 {
		flags.Usage()
		return exitUsage
	}
	s, err := compile()
	if err != nil { // the embedded schema is tested: only a broken build gets here
		fmt.Fprintln(stderr, "schemacheck:", err)
		return exitUsage
	}
	code := exitOK
	for _, name := range flags.Args() {
		body, err := readInput(name, stdin)
		if err != nil {
			fmt.Fprintln(stderr, "schemacheck:", err)
			code = exitUsage
			continue
		}
		found := s.check(body)
		if len(found) == 0 {
			fmt.Fprintf(stdout, "%s: ok\n", name)
			continue
		}
		for _, p := range found {
			fmt.Fprintf(stdout, "%s: %s\n", name, p)
		}
		if code == exitOK {
			code = exitProblems
		}
	}
	return code
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

// schema is the reply format's JSON Schema, compiled, with its document
// for the descriptions that explain a failed "not".
type schema struct {
	compiled *jsonschema.Schema
	doc      any
}

// schemaURL is where the compiler files the schema: its $id.
const schemaURL = "urn:pingnode:ping-reply:v1"

// compile compiles [pingstatus.JSONSchema].
func compile() (*schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(pingstatus.JSONSchema()))
	if err != nil {
		return nil, fmt.Errorf("the JSON Schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	return &schema{compiled: compiled, doc: doc}, nil
}

// A problem is one thing the schema refuses in a reply.
type problem struct {
	at      string // a JSON pointer into the reply; "" for the reply itself
	message string
}

func (p problem) String() string {
	at := p.at
	if at == "" {
		at = "(the reply)"
	}
	return at + ": " + p.message
}

// check returns the problems the schema finds in body, sorted by
// location, each once: the schema holds a field named exactly as the
// format spells it to its schema twice, as a property and as one of the
// spellings that patternProperties match, and a validator reports both.
func (s *schema) check(body []byte) []problem {
	body = bytes.TrimPrefix(body, []byte("\uFEFF"))
	reply, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		// In the program's own words: encoding/json's change from one
		// Go release to the next. pingcheck says where it breaks.
		return []problem{{message: "not JSON"}}
	}
	err = s.compiled.Validate(reply)
	invalid, ok := errors.AsType[*jsonschema.ValidationError](err)
	if !ok {
		if err != nil {
			return []problem{{message: err.Error()}}
		}
		return nil
	}
	var found []problem
	var leaves func(e *jsonschema.ValidationError)
	leaves = func(e *jsonschema.ValidationError) {
		for _, cause := range e.Causes {
			leaves(cause)
		}
		if len(e.Causes) > 0 {
			return
		}
		p := problem{at: pointer(e.InstanceLocation), message: e.BasicOutput().Error.String()}
		if _, ok := e.ErrorKind.(*kind.Not); ok {
			// "'not' failed" says nothing; the rule that holds the
			// "not" says what it asks for.
			if d := s.description(e.SchemaURL); d != "" {
				p.message = d
			}
		}
		found = append(found, p)
	}
	leaves(invalid)
	slices.SortFunc(found, func(a, b problem) int {
		return strings.Compare(a.at+"\x00"+a.message, b.at+"\x00"+b.message)
	})
	return slices.Compact(found)
}

// description returns the description of the schema at schemaURL, a URL
// whose fragment is a JSON pointer into the schema document, or "".
func (s *schema) description(schemaURL string) string {
	_, fragment, _ := strings.Cut(schemaURL, "#")
	fragment, err := url.PathUnescape(fragment)
	if err != nil || fragment == "" {
		return ""
	}
	at := s.doc
	for token := range strings.SplitSeq(strings.TrimPrefix(fragment, "/"), "/") {
		token = strings.NewReplacer("~1", "/", "~0", "~").Replace(token)
		switch v := at.(type) {
		case map[string]any:
			at = v[token]
		case []any:
			i, err := strconv.Atoi(token)
			if err != nil || i < 0 || i >= len(v) {
				return ""
			}
			at = v[i]
		default:
			return ""
		}
	}
	m, _ := at.(map[string]any)
	d, _ := m["description"].(string)
	return d
}

// pointer returns the JSON pointer of the reference tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}
