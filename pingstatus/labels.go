package pingstatus

import (
	"slices"
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
)

// labels reads the plugin's labels, the value in, and judges them key by
// key in sorted order. Over the limit, the whole field is no news (rule
// list-limit). Otherwise the result is the plugin's whole set (possibly
// empty) and the keys of entries refused for their value, sorted. A
// value that is not a string (nor null, read as "") drops its entry, and
// the plugin's current label with its key is kept (if the key is one the
// plugin may own).
func (p *parser) labels(t *jsontree.Tree, in int) (replace bool, out map[string]string, kept []string) {
	list := fieldPath(replyLevel, labelsField)
	if !p.withinLimit(ruleListLimit, SubjectLabel, list, "labels", treeCount(t, in), p.opts.maxLabels()) ||
		!p.expect(t, in, SubjectLabel, Refused, list, objectKinds, "labels left unchanged") {
		return false, nil, nil
	}
	entries := entries(t, in)
	j := p.labelJudge(list, len(entries))
	for _, e := range entries {
		key := e.key
		if t.Present(e.value) && t.Kind(e.value) != jsontree.String {
			done := "entry dropped"
			if j.mayKeep(key) {
				done += ", the plugin's current " + key + " label kept"
				j.kept = append(j.kept, key)
			}
			p.shapeWarn(ruleValueType, SubjectLabel, Refused, j.path(key), "must be a string, got %s; %s", describe(t, e.value), done)
			continue
		}
		p.addLabel(&j, key, strOr(t, e.value, ""))
	}
	slices.Sort(j.kept)
	return true, j.out, j.kept
}

// A labelJudge judges the entries of the plugin's labels, one by one, by
// the rules label-valid and label-namespace: Parse's of a reply's
// entries, and Check's of a patch's labels.
type labelJudge struct {
	list  string // the labels' path, "labels"
	check kuberules.LabelCheck
	// out are the labels kept; kept the keys of the entries refused for
	// their value.
	out  map[string]string
	kept []string
}

// labelJudge returns the judge of the labels at list, n of them.
func (p *parser) labelJudge(list string, n int) labelJudge {
	return labelJudge{list: list, check: p.opts.labelCheck(), out: make(map[string]string, n)}
}

// path returns the path of the label key as a warning names it.
func (j *labelJudge) path(key string) string { return labelPath(j.list, key) }

// mayKeep reports whether the plugin may own a label with key: whether
// an entry of it refused for its value keeps the plugin's current label.
func (j *labelJudge) mayKeep(key string) bool { return j.check.Check(key, "").Mine() }

// addLabel judges the label key=value by j, and keeps it when it passes:
// a valid key in a namespace the provider allows, none that no plugin may
// set, not one of the provider's own, and a valid value.
func (p *parser) addLabel(j *labelJudge, key, value string) {
	problems := j.check.Check(key, value)
	if problems.Mine() {
		j.out[key] = value
		return // the common case: no path to build
	}
	path := j.path(key)
	switch {
	case problems.Key != "":
		p.warn(ruleLabelValid, SubjectLabel, Refused, path, "%s is not a valid label key: %s; entry dropped", text.Quote(key, quoteBytes), problems.Key)
	case problems.Forbidden != "":
		p.warn(ruleLabelNamespace, SubjectLabel, Refused, path, "%s is in a namespace no plugin may set (%s); entry dropped", key, problems.Forbidden)
	case problems.Protected:
		p.warn(ruleLabelNamespace, SubjectLabel, Refused, path, "%s belongs to the provider; entry dropped", key)
	case problems.NotAllowed:
		p.warn(ruleLabelNamespace, SubjectLabel, Refused, path, "%s is not in a namespace the provider allows (%s, and their subdomains); entry dropped", key, p.allowedNamespaces())
	case problems.Value != "":
		p.warn(ruleLabelValid, SubjectLabel, Refused, path, "%s is not a valid label value: %s; entry dropped, the plugin's current %s label kept", text.Quote(value, quoteBytes), problems.Value, key)
		j.kept = append(j.kept, key)
	}
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
