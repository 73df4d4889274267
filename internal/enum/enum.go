// Package enum gives the small integer enums of pingstatus and nodeapply
// their names, as text and in JSON, in one way.
package enum

import "fmt"

// Name returns names[i], or typ+"(?)" for a value that has no name.
func Name(names []string, i int, typ string) string {
	if i < 0 || i >= len(names) {
		return typ + "(?)"
	}
	return names[i]
}

// Marshal returns v's String as text, or an error when v has no name
// (known is false).
func Marshal(v fmt.Stringer, known bool) ([]byte, error) {
	if !known {
		return nil, fmt.Errorf("cannot marshal %s", v)
	}
	return []byte(v.String()), nil
}

// Unmarshal sets *v to the value from first to last whose String is text.
func Unmarshal[T interface {
	~int
	fmt.Stringer
}](v *T, text []byte, first, last T) error {
	for x := first; x <= last; x++ {
		if x.String() == string(text) {
			*v = x
			return nil
		}
	}
	return fmt.Errorf("%q is not a %T", text, *v)
}
