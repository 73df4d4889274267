package kuberules

// MaxPartNameBytes is the longest name of a backend's part: a DNS label,
// so that the part's name is a label value too, and the provider's node
// name, the part's within a template, is a DNS subdomain.
const MaxPartNameBytes = 63

// PartNameProblem returns why name cannot name a part of a backend (a
// DNS label of at most [MaxPartNameBytes]), or "" if it can.
func PartNameProblem(name string) string {
	return dnsLabelProblem(name, MaxPartNameBytes)
}
