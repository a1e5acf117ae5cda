package pool

import "testing"

func TestClasses(t *testing.T) {
	for _, c := range []struct {
		size, align, bytes uint64
	}{
		{1, 4, 4}, {4, 4, 4}, {5, 4, 8}, {28, 4, 28}, {32, 4, 32}, {33, 4, 36},
		{100, 4, 104}, {1000, 4, 1024}, {1025, 4, 1152}, {4096, 4, 4096},
		{1000, 256, 1024}, {1025, 256, 1280}, {1153, 128, 1280}, {4097, 4096, 8192},
		{3, 64, 64}, {256 << 20, 4, 256 << 20}, {256<<20 - 4, 4, 256 << 20},
	} {
		got := classBytes(requestClass(c.size, c.align))
		if got != c.bytes {
			t.Errorf("class of %d aligned %d = %d bytes, want %d", c.size, c.align, got, c.bytes)
		}
	}
	// Every size: its class is at least it, wastes at most 12.5% (beyond
	// the 4-byte unit), classes are monotonic, and classOf is exact on
	// class bounds.
	prev := 0
	for size := uint64(4); size < 1<<16; size += 4 {
		c := requestClass(size, 4)
		b := classBytes(c)
		if b < size || (size > 32 && b > size+size/8) || c < prev {
			t.Fatalf("size %d: class %d of %d bytes (previous class %d)", size, c, b, prev)
		}
		if classOf(b/4) != c {
			t.Fatalf("class %d's size %d maps to class %d", c, b, classOf(b/4))
		}
		prev = c
	}
	// Aligned requests for every alignment: multiples, and under twice
	// the aligned size.
	for a := uint64(4); a <= 1<<20; a *= 2 {
		for _, size := range []uint64{1, a - 1, a, a + 1, 3*a + 5, 7 * a, 9*a + 1} {
			b := classBytes(requestClass(size, a))
			r := (size + a - 1) / a * a
			if b%a != 0 || b < r || b >= 2*r {
				t.Errorf("size %d align %d: %d bytes", size, a, b)
			}
		}
	}
	if c := classOf(1 << 62); c >= numClasses-fitClasses {
		t.Errorf("class of 2^64 bytes is %d: too close to %d", c, numClasses)
	}
}
