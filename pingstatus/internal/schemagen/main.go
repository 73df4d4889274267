// Command schemagen writes pingstatus/schema.json, the reply's JSON
// Schema, from the wire types of pingstatus, the rules table of
// ./wireschema and the doc comments of wire.go. pingstatus/schema.go runs
// it (go generate), and a test of pingstatus fails when the file is not
// what it writes.
//
//	go run ./internal/schemagen -dir . -o schema.json
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/pingnode/pingnode/pingstatus/internal/schemagen/wireschema"
)

func main() {
	dir := flag.String("dir", ".", "the directory of pingstatus's source, for its doc comments")
	out := flag.String("o", "schema.json", "the file to write; - for standard output")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	schema, err := wireschema.Build(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	if *out == "-" {
		_, err = os.Stdout.Write(schema)
	} else if old, readErr := os.ReadFile(*out); readErr != nil || !bytes.Equal(old, schema) {
		err = os.WriteFile(*out, schema, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
