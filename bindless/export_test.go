package bindless

// Check verifies r's invariants, for the black-box tests.
func Check[K comparable](r *Registry[K]) error { return r.check() }
