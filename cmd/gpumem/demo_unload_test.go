package main

import (
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{{"24", 24 << 20}, {"64MiB", 64 << 20}, {"512KiB", 512 << 10}, {"1.5GiB", 3 << 29}, {"4096B", 4096}, {"2G", 2 << 30}, {"0.5M", 1 << 19}} {
		if got, err := parseSize(c.in); err != nil || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "0", "-1", "MiB", "12TB", "NaN", "1e30"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) succeeded", in)
		}
	}
}
