package wireschema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// foldPattern returns the ECMA-262 regular expression that matches every
// spelling of the field name name that encoding/json reads as name
// (exactly, or else by Unicode simple folding): for each letter, its
// folding orbit, upper case first, then lower case, then the others
// (U+017F, long s, for s; U+212A, Kelvin sign, for k). "^[Cc][Pp][Uu]$".
func foldPattern(name string) string {
	var b strings.Builder
	b.WriteString("^")
	for _, c := range name {
		class := []rune{unicode.ToUpper(c)}
		for r := unicode.ToLower(c); r != class[0]; r = unicode.SimpleFold(r) {
			class = append(class, r)
		}
		b.WriteString("[" + string(class) + "]")
	}
	b.WriteString("$")
	return b.String()
}

// The multipliers of a whole number's spellings that count takes, in the
// order the pattern lists them: decimal exponents, then the decimal
// suffixes, then the binary ones.
var (
	decimalSuffixes = []string{"k", "M", "G", "T", "P", "E"}
	binarySuffixes  = []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
)

// wholeUpTo returns the pattern of the whole numbers from 0 to limit as a
// string spells them for a quantity parser: digits with leading zeros, a
// decimal exponent ("1e3", "10E+2"), or a suffix ("1k", "1Ki"), and 0 with
// any suffix or exponent. For 1024:
//
//	^\+?(0*([0-9]{1,3}|10[01][0-9]|102[0-4])([eE]\+?0+)?|0*([0-9]{1,2}|10[0-2])[eE]\+?0*1|...|0*1([eE]\+?0*3|k|Ki)|0+(...))$
func wholeUpTo(limit int64) string {
	type spelling struct {
		suffix string
		mult   int64
	}
	var spellings []spelling
	for e, mult := 0, int64(1); mult <= limit; e, mult = e+1, mult*10 {
		suffix := `[eE]\+?0+`
		if e > 0 {
			suffix = `[eE]\+?0*` + strconv.Itoa(e)
		}
		spellings = append(spellings, spelling{suffix, mult})
	}
	for i, s := range decimalSuffixes {
		spellings = append(spellings, spelling{s, pow(10, 3*(i+1))})
	}
	for i, s := range binarySuffixes {
		spellings = append(spellings, spelling{s, pow(2, 10*(i+1))})
	}
	// The spellings by the largest mantissa each takes, in the order of
	// their first.
	var mantissas []int64
	suffixes := make(map[int64][]string)
	for _, s := range spellings {
		m := limit / s.mult
		if m == 0 {
			continue
		}
		if _, ok := suffixes[m]; !ok {
			mantissas = append(mantissas, m)
		}
		suffixes[m] = append(suffixes[m], s.suffix)
	}
	var alternatives []string
	for i, m := range mantissas {
		digits := upTo(m, i == 0)
		if strings.Contains(digits, "|") {
			digits = "(" + digits + ")"
		}
		suffix := strings.Join(suffixes[m], "|")
		switch {
		case i == 0: // the plain spelling, with e0 or none
			suffix = "(" + suffix + ")?"
		case len(suffixes[m]) > 1:
			suffix = "(" + suffix + ")"
		}
		alternatives = append(alternatives, "0*"+digits+suffix)
	}
	alternatives = append(alternatives, `0+([kMGTPE]|[KMGTPE]i|[eE]\+?[0-9]+)`)
	return `^\+?(` + strings.Join(alternatives, "|") + `)$`
}

func pow(base int64, n int) int64 {
	v := int64(1)
	for range n {
		v *= base
	}
	return v
}

// upTo returns the pattern of the numbers from 1 to m, written without
// leading zeros, and of 0 as well when m has more than one digit or zero
// says so; an alternation of digit classes, as "[0-9]{1,3}|10[01][0-9]|102[0-4]".
func upTo(m int64, zero bool) string {
	digits := strconv.FormatInt(m, 10)
	d := len(digits)
	var alternatives []string
	switch {
	case d == 2:
		alternatives = append(alternatives, "[0-9]")
	case d > 2:
		alternatives = append(alternatives, fmt.Sprintf("[0-9]{1,%d}", d-1))
	}
	for i := range d {
		lo := byte('0')
		if i == 0 && (d > 1 || !zero) {
			lo = '1'
		}
		c := digits[i]
		switch {
		case i < d-1 && c > lo:
			rest := "[0-9]"
			if n := d - i - 1; n > 1 {
				rest = fmt.Sprintf("[0-9]{%d}", n)
			}
			alternatives = append(alternatives, digits[:i]+digitClass(lo, c-1)+rest)
		case i == d-1 && c >= lo:
			alternatives = append(alternatives, digits[:i]+digitClass(lo, c))
		}
	}
	return strings.Join(alternatives, "|")
}

// digitClass returns the pattern of the digits from a to b.
func digitClass(a, b byte) string {
	switch b - a {
	case 0:
		return string(a)
	case 1:
		return "[" + string(a) + string(b) + "]"
	}
	return "[" + string(a) + "-" + string(b) + "]"
}

// prefixed returns the pattern of the strings, their common prefix up
// to a '/' written once: pingnode\.io/(plugin-unreachable|part-gone).
func prefixed(strs ...string) string {
	prefix := ""
	if i := strings.LastIndexByte(strs[0], '/'); i >= 0 {
		prefix = strs[0][:i+1]
	}
	rests := make([]string, len(strs))
	for i, s := range strs {
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok {
			return alternation("", strs, "")
		}
		rests[i] = rest
	}
	return alternation(prefix, rests, "")
}

// suffixed returns the pattern of the domains, their common suffix after
// their first label written once: (feature|profile)\.node\.kubernetes\.io.
func suffixed(domains ...string) string {
	heads := make([]string, len(domains))
	var suffix string
	for i, d := range domains {
		head, tail, _ := strings.Cut(d, ".")
		if i > 0 && tail != suffix {
			return alternation("", domains, "")
		}
		heads[i], suffix = head, tail
	}
	return alternation("", heads, "."+suffix)
}

// alternation returns prefix, the alternatives and suffix as a pattern,
// each quoted.
func alternation(prefix string, alternatives []string, suffix string) string {
	quoted := make([]string, len(alternatives))
	for i, a := range alternatives {
		quoted[i] = regexp.QuoteMeta(a)
	}
	return regexp.QuoteMeta(prefix) + "(" + strings.Join(quoted, "|") + ")" + regexp.QuoteMeta(suffix)
}
