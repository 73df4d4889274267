package kuberules

import (
	"strconv"
	"strings"
)

// These checks give the verdicts of apimachinery's validation.IsQualifiedName
// and validation.IsValidLabelValue (a differential property test holds them
// to it, at every release the module supports), in this library's own words,
// and do not allocate on the valid path, so they can run on every ping.

const (
	maxNameLen      = 63  // name part of a qualified name; label value
	maxSubdomainLen = 253 // DNS-1123 subdomain
)

// The problems, worded to read after "is not a valid taint key: " and after
// "a taint whose key ".
const (
	problemEmpty      = "must not be empty"
	problemSlashes    = "must have at most one '/' (an optional prefix like example.com, '/', then a name)"
	problemNoPrefix   = "must have a prefix before '/', like example.com/"
	problemPrefix     = "prefix must be a lowercase DNS subdomain, like example.com"
	problemNoName     = "must have a name after '/'"
	problemNameLen    = "name must be at most 63 characters"
	problemNameChars  = "name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	problemValueLen   = "must be at most 63 characters"
	problemValueChars = "must be empty, or letters, digits, '-', '_' and '.' starting and ending with a letter or digit"
)

// isQualifiedName reports whether dotPrefix+s is a qualified name.
func isQualifiedName(dotPrefix, s string) bool { return qualifiedNameProblem(dotPrefix, s) == "" }

// qualifiedNameProblem returns why dotPrefix+s is not a qualified name (an
// optional DNS subdomain prefix and '/', then a name of at most 63
// characters), or "" if it is one. dotPrefix is "" or a run of DNS labels
// that ends in a dot (like "requests."); it is put before s's own prefix
// without building the joined string, and callers only pass one with an s
// that has a prefix.
func qualifiedNameProblem(dotPrefix, s string) string {
	if s == "" {
		return problemEmpty
	}
	prefix, name, hasPrefix := strings.Cut(s, "/")
	if !hasPrefix {
		if dotPrefix != "" {
			return problemNoPrefix
		}
		return namePartProblem(s)
	}
	switch {
	case strings.Contains(name, "/"):
		return problemSlashes
	case prefix == "":
		return problemNoPrefix
	case len(dotPrefix)+len(prefix) > maxSubdomainLen:
		return "prefix must be at most " + strconv.Itoa(maxSubdomainLen-len(dotPrefix)) + " characters"
	case !isDNS1123Subdomain(prefix):
		return problemPrefix
	case name == "":
		return problemNoName
	}
	return namePartProblem(name)
}

// namePartProblem returns why s does not match
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] within 63 characters, or "".
func namePartProblem(s string) string {
	switch {
	case s == "":
		return problemEmpty
	case len(s) > maxNameLen:
		return problemNameLen
	case !isNameChars(s):
		return problemNameChars
	}
	return ""
}

// labelValueProblem returns why s is not a label value (empty, or a name
// part), or "".
func labelValueProblem(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) > maxNameLen:
		return problemValueLen
	case !isNameChars(s):
		return problemValueChars
	}
	return ""
}

// problemDNSLabel is why a name is not a lowercase DNS label.
const problemDNSLabel = "must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit"

// dnsLabelProblem returns why name is not a lowercase DNS label (RFC 1123)
// of at most maxLen characters, or "" if it is one.
func dnsLabelProblem(name string, maxLen int) string {
	switch {
	case name == "":
		return problemEmpty
	case len(name) > maxLen:
		return "must be at most " + strconv.Itoa(maxLen) + " characters"
	case !isDNS1123Label(name):
		return problemDNSLabel
	}
	return ""
}

// isNameChars reports whether the non-empty s is alphanumerics, '-', '_' and
// '.', starting and ending with an alphanumeric.
func isNameChars(s string) bool {
	if !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isDNS1123Subdomain reports whether s is a lowercase RFC 1123 subdomain of
// at most 253 characters.
func isDNS1123Subdomain(s string) bool {
	if s == "" || len(s) > maxSubdomainLen {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if !isDNS1123Label(label) {
			return false
		}
	}
	return true
}

// isDNS1123Label reports whether s matches [a-z0-9]([-a-z0-9]*[a-z0-9])?
// (length is bounded by the subdomain's).
func isDNS1123Label(s string) bool {
	if s == "" {
		return false
	}
	if !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }
