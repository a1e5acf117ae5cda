package meshlet

// Check exposes the bookkeeping check to the black-box tests.
func Check(m *Manager) error { return m.check() }
