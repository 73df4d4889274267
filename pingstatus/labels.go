package pingstatus

import (
	"maps"
	"slices"
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// labels judges the plugin's labels, key by key in sorted order. Over the
// limit, the whole field is no news. Otherwise the result is the plugin's
// whole set (possibly empty) and the keys of entries refused for their
// value, sorted.
func (p *parser) labels(in map[string]string) (replace bool, out map[string]string, kept []string) {
	if !p.withinLimit(SubjectLabel, fieldPath(replyLevel, labelsField), "labels", len(in), p.opts.maxLabels()) {
		return false, nil, nil
	}
	kept = p.keptOnBadLabel
	check := p.opts.labelCheck()
	out = make(map[string]string, len(in))
	for _, key := range slices.Sorted(maps.Keys(in)) {
		value := in[key]
		path := labelPath(key)
		switch problems := check.Check(key, value); {
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
		default:
			out[key] = value
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
