// Package setting is how the reference provider says that a setting
// cannot work: an [Error] names the setting by its field, so that the
// command line reports it under its flag's name, whichever package judged
// it (the provider's configuration, its election).
package setting

import "fmt"

// An Error is a setting that cannot work.
type Error struct {
	// Setting is the field's name, such as "Interval".
	Setting string
	// Value is the setting as given.
	Value string
	// Problem says what the setting must be instead.
	Problem string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Setting, e.Value, e.Problem)
}

// Errorf is the Error of setting, given value, whose problem format and
// args say.
func Errorf(setting string, value any, format string, args ...any) error {
	return &Error{Setting: setting, Value: fmt.Sprint(value), Problem: fmt.Sprintf(format, args...)}
}
