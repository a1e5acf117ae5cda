package bindless

// Check verifies r's invariants, for the black-box tests.
func Check[K comparable](r *Registry[K]) error { return r.check() }

// PageBucket returns the key of page i's bucket, whether it holds sized
// textures, and ok false when there is no page i.
func PageBucket[K comparable](r *Registry[K], i int) (key Key, sized, ok bool) {
	if i < 0 || i >= len(r.pages) {
		return Key{}, false, false
	}
	b := r.pages[i].b
	return b.key, b.sized, true
}
