package pingstatus

import (
	"slices"
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// labels reads and judges the plugin's labels, the value in, key by key
// in sorted order. Over the limit, the whole field is no news. Otherwise
// the result is the plugin's whole set (possibly empty) and the keys of
// entries refused for their value, sorted. A value that is not a string
// (nor null, read as "") drops its entry, and the plugin's current label
// with its key is kept (if the key is valid: no label has an invalid one).
func (p *parser) labels(t *tree, in int) (replace bool, out map[string]string, kept []string) {
	list := fieldPath(replyLevel, labelsField)
	if !p.withinLimit(SubjectLabel, list, "labels", t.count(in), p.opts.maxLabels()) ||
		!p.expect(t, in, SubjectLabel, Refused, list, objectKinds, "labels left unchanged") {
		return false, nil, nil
	}
	check := p.opts.labelCheck()
	entries := t.entries(in)
	out = make(map[string]string, len(entries))
	for _, e := range entries {
		key := e.key
		if t.present(e.value) && t.nodes[e.value].kind != stringKind {
			done := "entry dropped"
			if check.Check(key, "").Mine() {
				done += ", the plugin's current " + key + " label kept"
				kept = append(kept, key)
			}
			p.shapeWarn(SubjectLabel, Refused, labelPath(key), "must be a string, got %s; %s", t.describe(e.value), done)
			continue
		}
		value := t.strOr(e.value, "")
		problems := check.Check(key, value)
		if problems.Mine() {
			out[key] = value
			continue // the common case: no path to build
		}
		path := labelPath(key)
		switch {
		case problems.Key != "":
			p.warn(SubjectLabel, Refused, path, "%s is not a valid label key: %s; entry dropped", text.Quote(key, quoteBytes), problems.Key)
		case problems.Forbidden != "":
			p.warn(SubjectLabel, Refused, path, "%s is in a namespace no plugin may set (%s); entry dropped", key, problems.Forbidden)
		case problems.Protected:
			p.warn(SubjectLabel, Refused, path, "%s belongs to the provider; entry dropped", key)
		case problems.NotAllowed:
			p.warn(SubjectLabel, Refused, path, "%s is not in a namespace the provider allows (%s, and their subdomains); entry dropped", key, p.allowedNamespaces())
		case problems.Value != "":
			p.warn(SubjectLabel, Refused, path, "%s is not a valid label value: %s; entry dropped, the plugin's current %s label kept", text.Quote(value, quoteBytes), problems.Value, key)
			kept = append(kept, key)
		}
	}
	slices.Sort(kept)
	return true, out, kept
}

// allowedNamespaces names the namespaces the options allow, for a
// warning: the defaults and at most a few of the provider's.
func (p *parser) allowedNamespaces() string {
	const most = 4
	names := slices.Concat(kuberules.DefaultLabelNamespaces[:], p.opts.LabelNamespaces)
	if len(names) > most {
		return strings.Join(names[:most], ", ") + " and more"
	}
	return strings.Join(names, ", ")
}
