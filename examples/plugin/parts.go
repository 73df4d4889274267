package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/pingstatus"
)

// readParts reads a -parts file: a JSON array of parts, each an object
// of [pingstatus.PartResponse]'s fields and no other.
func readParts(file string) ([]pingstatus.PartResponse, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var parts []pingstatus.PartResponse
	if err := dec.Decode(&parts); err != nil {
		return nil, err
	}
	if parts == nil {
		return nil, errors.New("want a JSON array of parts, got null")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("more after the array of parts")
	}
	return parts, nil
}

// partsProblems returns what is wrong with the parts of the -parts file
// or of -parts-generate (flag names which), each a line, as the provider
// would judge them with opts.
func partsProblems(flag string, parts []pingstatus.PartResponse, opts pingstatus.Options) []string {
	var problems []string
	for _, w := range (pingstatus.PingResponse{Nodes: append([]pingstatus.PartResponse{}, parts...)}).Validate(opts) {
		problems = append(problems, flag+": "+w.String())
	}
	return problems
}

// fleetProblems returns what is wrong with c, a -parts-generate fleet,
// each a line naming its flag: what the flags cannot check one by one,
// as they are read.
func fleetProblems(c partsfleet.Config) []string {
	var problems []string
	if c.Machines > pingstatus.DefaultMaxParts {
		problems = append(problems, fmt.Sprintf("-parts-generate: at most %d machines, the most parts a provider takes by default, got %d", pingstatus.DefaultMaxParts, c.Machines))
	}
	if c.MemoryMi < int64(c.CPUs) { // so that a free cpu has free memory
		problems = append(problems, fmt.Sprintf("-parts-memory: want at least 1Mi a cpu (%dMi with -parts-cpus %d), got %dMi", c.CPUs, c.CPUs, c.MemoryMi))
	}
	if len(c.Stuck) > 0 {
		names := map[string]bool{}
		for i := range min(c.Machines, pingstatus.DefaultMaxParts) {
			names[c.MachineName(i)] = true
		}
		for _, name := range c.Stuck {
			if !names[name] {
				problems = append(problems, fmt.Sprintf("-parts-stuck: %q is no machine of the fleet (%d machines, %s and on)", name, c.Machines, c.MachineName(0)))
			}
		}
	}
	return problems
}
