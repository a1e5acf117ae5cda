package meshlet

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestPutWords checks both ways putWords writes (the memory of the words on
// a little-endian host, a word at a time elsewhere) against words encoded
// one by one, with and without an added address, and that every byte of dst
// is written: dst starts filled with garbage.
func TestPutWords(t *testing.T) {
	defer func(le bool) { hostLittleEndian = le }(hostLittleEndian)
	r := rand.New(rand.NewPCG(3, 4))
	for _, le := range []bool{true, false} {
		hostLittleEndian = le
		for range 200 {
			words := make([]uint32, r.IntN(300))
			for i := range words {
				words[i] = r.Uint32()
			}
			rowWords := uint32(1 + r.IntN(8))
			addr := uint32(r.IntN(int(rowWords)))
			add := uint32(0)
			if r.IntN(2) == 0 {
				add = r.Uint32()
			}
			want := make([]byte, 4*len(words))
			for i, w := range words {
				if add != 0 && uint32(i) >= addr && (uint32(i)-addr)%rowWords == 0 {
					w += add
				}
				binary.LittleEndian.PutUint32(want[4*i:], w)
			}
			got := make([]byte, len(want))
			for i := range got {
				got[i] = byte(r.Uint32())
			}
			putWords(got, words, rowWords, addr, add)
			if !bytes.Equal(got, want) {
				t.Fatalf("little-endian path %v, %d words, rows of %d, address word %d, add %d: bytes differ", le, len(words), rowWords, addr, add)
			}
		}
	}
}
