package mesh

// Check exposes the bookkeeping check to the black-box tests.
func Check(a *Allocator) error { return a.check() }
