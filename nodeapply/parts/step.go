package parts

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Node is a part's node that the provider serves.
type Node struct {
	// Part is the part's name, as the reply lists it
	// ([pingstatus.Part.Name]).
	Part string
	// Node is the node as the provider has it now. Step reads its name and
	// its taints, and hands it back in the node's [Decision].
	Node *corev1.Node
	// Pods is how many pods bound to the node are not terminal (phase
	// neither Succeeded nor Failed). The node is deleted only when it is
	// 0 (see the package's documentation).
	Pods int
}

// Step returns what the provider does with each part's node after one
// ping of its plugin, and which new parts it registers: a [Decision] for
// each node of nodes, the nodes it serves now, and one for each part the
// reply lists that none of them serves, sorted by part, then node name.
// It never modifies ping or nodes. The rules are the package's (see its
// documentation).
func Step(ping nodeapply.Ping, nodes []Node, opts nodeapply.Options) []Decision {
	s := newStepper(ping, nodes, opts)
	n := 0
	s.each(func(Decision) { n++ })
	if n == 0 {
		return nil
	}
	out := make([]Decision, 0, n)
	s.each(func(d Decision) { out = append(out, d) })
	return out
}

// news is what a ping says of the parts.
type news int

const (
	failed  news = iota // the plugin did not answer (rule parts-failed)
	noNews              // it answered without a list of parts (rule parts-no-news)
	listing             // it listed its parts (rules parts-listed and parts-incomplete)
)

// A stepper holds what Step reads of one ping, and walks the decisions
// it makes of it: the one engine, run once to count and once to write.
type stepper struct {
	news       news
	served     []Node            // sorted by part, then node name
	parts      []pingstatus.Part // as pingstatus judged them: sorted by name, each once
	incomplete bool
	at         time.Time // the ping's time, or zero
	opts       nodeapply.Options
}

func newStepper(ping nodeapply.Ping, nodes []Node, opts nodeapply.Options) stepper {
	s := stepper{served: servedInOrder(nodes), at: ping.At, opts: opts, news: noNews}
	switch {
	case !ping.Reached():
		s.news = failed
	default:
		if ping, _ := nodeapply.Judge(ping, opts.Reply); ping.Reply != nil && ping.Reply.ReplaceParts { // rule parts-order
			s.news, s.parts, s.incomplete = listing, ping.Reply.Parts, ping.Reply.PartsIncomplete
		}
	}
	return s
}

// each calls yield with each decision, in order: the served nodes and
// the listed parts merged by name.
func (s *stepper) each(yield func(Decision)) {
	if s.news != listing {
		for i := range s.served {
			yield(s.asItIs(&s.served[i]))
		}
		return
	}
	i, j, listed := 0, 0, len(s.parts)
	for i < len(s.served) || j < listed {
		var p *pingstatus.Part
		c := -1 // how served[i] compares with the next listed part: -1 when none is left
		switch {
		case j == listed:
		case i == len(s.served):
			p, c = &s.parts[j], 1
		default:
			p = &s.parts[j]
			c = strings.Compare(s.served[i].Part, p.Name)
		}
		switch {
		case c < 0: // not listed
			yield(s.unlisted(&s.served[i]))
			i++
		case c > 0: // not served
			yield(Decision{Part: p.Name, Action: Register, Patch: &p.Patch})
			j++
		default:
			yield(Decision{Part: p.Name, Action: Ping, Node: s.served[i].Node, Patch: &p.Patch})
			for i++; i < len(s.served) && s.served[i].Part == p.Name; i++ {
				yield(s.asItIs(&s.served[i])) // another node of the part (rule parts-one-node)
			}
			j++
		}
	}
}

// asItIs is the decision for a node of which the ping brings no news: a
// failed ping's (rule parts-failed), or a reply's without parts (rule parts-no-news).
func (s *stepper) asItIs(n *Node) Decision {
	d := Decision{Part: n.Part, Action: Ping, Node: n.Node}
	if _, gone := nodeapply.PartGone(n.Node); gone && s.news != failed {
		d.Action = Leave
	}
	return d
}

// unlisted is the decision for a node whose part the reply does not list
// (rules parts-listed, parts-incomplete and parts-delete).
func (s *stepper) unlisted(n *Node) Decision {
	switch {
	case s.incomplete:
		return s.asItIs(n)
	case s.deletes(n):
		return Decision{Part: n.Part, Action: Delete, Node: n.Node}
	}
	return Decision{Part: n.Part, Action: Leave, Node: n.Node}
}

// deletes reports whether a node whose part the reply does not list is
// deleted (rule parts-delete).
func (s *stepper) deletes(n *Node) bool {
	since, _ := nodeapply.PartGone(n.Node)
	return n.Pods == 0 && s.opts.PartGraceOver(since, s.at)
}
