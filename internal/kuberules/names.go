package kuberules

import "strings"

// These checks agree with apimachinery's content.IsQualifiedName and
// content.IsLabelValue (a differential property test holds them to it), but
// do not allocate, so they can run on every ping.

const (
	maxNameLen      = 63  // name part of a qualified name; label value
	maxSubdomainLen = 253 // DNS-1123 subdomain
)

// isQualifiedName reports whether dotPrefix+s is a qualified name. dotPrefix
// is "" or a run of DNS labels that ends in a dot (like "requests."); it is
// put before s's own prefix without building the joined string.
func isQualifiedName(dotPrefix, s string) bool {
	prefix, name, hasPrefix := strings.Cut(s, "/")
	if !hasPrefix {
		if dotPrefix != "" {
			return false // "requests.name" has no '/' either: a bare name with a dot; callers never ask this
		}
		return isQualifiedNamePart(s)
	}
	if strings.Contains(name, "/") {
		return false
	}
	if len(dotPrefix)+len(prefix) > maxSubdomainLen || !isDNS1123Subdomain(prefix) {
		return false
	}
	return isQualifiedNamePart(name)
}

// isQualifiedNamePart reports whether s matches ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
// and is at most 63 characters long.
func isQualifiedNamePart(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
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

// isLabelValue reports whether s is empty or a valid name part.
func isLabelValue(s string) bool { return s == "" || isQualifiedNamePart(s) }

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
