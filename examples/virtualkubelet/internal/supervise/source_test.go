package supervise

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/pingstatus"
)

// TestWithoutParts: to a provider that serves no parts, the warnings about
// the reply's parts (a part's fields, the parts list and its entries) are
// one warning that the parts are ignored, which each warning tells by its
// own fields (Warning.AboutParts), not by its path; the warnings about the
// reply beside the parts stay, and a reply without parts keeps its
// warnings as they are.
func TestWithoutParts(t *testing.T) {
	body := []byte(`{"taints":[{"key":"a b","effect":"NoSchedule"}],"nodes":[{"name":"cn001","resources":{"cpu":"-1"}},{"name":"Bad"},{"name":"cn002","resources":{"cpuu":"1"}}]}`)
	patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
	var got []string
	for _, w := range withoutParts(&patch, warnings) {
		got = append(got, w.String())
	}
	want := []string{
		`taints[0].key: "a b" is not a valid taint key: name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit; entry dropped`,
		partsIgnored.String(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s\nfrom %v", diff, warnings)
	}
	plain, plainWarnings := pingstatus.Parse([]byte(`{"resources":{"cpu":"-1"}}`), pingstatus.Options{})
	if got := withoutParts(&plain, plainWarnings); len(got) != 1 || &got[0] != &plainWarnings[0] {
		t.Errorf("a reply without parts: %v, want its warnings as they are", got)
	}
}
