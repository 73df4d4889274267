package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// requests are counters read from the API server's own /metrics: its
// apiserver_request_total by verb, resource and subresource (every code
// counted), and etcd_requests_total, what the API server asked etcd, by
// operation and resource. The figures are the control plane's, not the
// provider's.
type requests struct {
	api  map[string]float64 // "VERB resource[/subresource]"
	etcd map[string]float64 // "operation resource"
}

// readRequests scrapes the API server's /metrics.
func readRequests(ctx context.Context) (requests, error) {
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return requests{}, err
	}
	r := requests{api: map[string]float64{}, etcd: map[string]float64{}}
	scanner := bufio.NewScanner(bytes.NewReader(body))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || (name != "apiserver_request_total" && name != "etcd_requests_total") {
			continue
		}
		labelText, valueText, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		value, err := strconv.ParseFloat(strings.TrimSpace(valueText), 64)
		if err != nil {
			return requests{}, fmt.Errorf("%s: %w", line, err)
		}
		labels := parseLabels(labelText)
		if name == "apiserver_request_total" {
			key := labels["verb"] + " " + labels["resource"]
			if labels["subresource"] != "" {
				key += "/" + labels["subresource"]
			}
			r.api[key] += value
		} else {
			r.etcd[labels["operation"]+" "+labels["resource"]] += value
		}
	}
	return r, scanner.Err()
}

// parseLabels reads Prometheus labels, name="value",...; the values read
// here hold no quotes or commas.
func parseLabels(text string) map[string]string {
	labels := map[string]string{}
	for pair := range strings.SplitSeq(text, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if ok {
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return labels
}

// since is what was counted from before to r.
func (r requests) since(before requests) requests {
	d := requests{api: map[string]float64{}, etcd: map[string]float64{}}
	for k, v := range r.api {
		if n := v - before.api[k]; n != 0 {
			d.api[k] = n
		}
	}
	for k, v := range r.etcd {
		if n := v - before.etcd[k]; n != 0 {
			d.etcd[k] = n
		}
	}
	return d
}

// mustReadRequests is readRequests for a test or benchmark.
func mustReadRequests(tb testing.TB) requests {
	tb.Helper()
	r, err := readRequests(context.Background())
	if err != nil {
		tb.Fatalf("reading the API server's metrics: %v", err)
	}
	return r
}

// String lists the counters, for a log.
func (r requests) String() string {
	var b strings.Builder
	for _, m := range []map[string]float64{r.api, r.etcd} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "\n  %-40s %g", k, m[k])
		}
	}
	return b.String()
}
