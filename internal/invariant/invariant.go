// Package invariant reports broken invariants. It holds gpumem's one rule
// for what fails how:
//
//   - An error value for anything a caller or a device can cause: bad
//     input (arguments, options, a stale or foreign handle), a device that
//     refuses, fails or is lost, use after Release. The state afterwards
//     is the one the method documents.
//   - A panic, through Broken or Check, for a broken invariant of
//     gpumem's own bookkeeping: a state no input can produce (a live
//     handle its allocator does not know, a move of a range nobody
//     holds). That is a bug in gpumem and the type's state is no longer
//     known; an error would promise the caller a state it cannot have.
//
// So a "cannot happen" branch panics here; it never returns an error.
// Every such panic has one shape: the package, "internal error", what
// broke.
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
