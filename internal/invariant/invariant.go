// Package invariant reports broken invariants: bugs in gpumem, never bad
// input, which every package answers with an error value. The managers
// and the command panic through it, so that every such crash has one
// shape: the package, "internal error", what broke.
package invariant

import "fmt"

// Broken panics with pkg's name and what broke, formatted as fmt.Sprintf
// does.
func Broken(pkg, format string, args ...any) {
	panic(fmt.Sprintf("%s: internal error: %s", pkg, fmt.Sprintf(format, args...)))
}

// Check calls Broken when ok is false.
func Check(ok bool, pkg, what string) {
	if !ok {
		Broken(pkg, "%s", what)
	}
}
