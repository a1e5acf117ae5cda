package meshlet_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/meshlet"
)

// BenchmarkSweep times one Sweep call with the default budget (64 moves,
// spent across both arenas) on host: the slides, the batched device moves
// of both buffers, and the address patches of every batch whose data
// moved. Between episodes, with the timer stopped, half of the batches are
// replaced by new ones and a random half removed, so every call finds
// batches to move. Batches are meshlet-shaped: 4 to 16 meshlets of 64 to
// 128 words, rows of 4 words.
func BenchmarkSweep(b *testing.B) {
	dev, err := host.New(host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Release()
	m, err := meshlet.New(dev, meshlet.Options{RowWords: 4, AddressWord: 1,
		Data: arena.Options{InitialElems: 4 << 20}, Rows: arena.Options{InitialElems: 64 << 10}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Release()
	r := rand.New(rand.NewPCG(1, 2))
	var live []meshlet.BatchHandle
	data, rows := make([]uint32, 16*128), make([]uint32, 16*4)
	add := func() {
		n := 4 + r.IntN(13)
		words := n * (64 + r.IntN(65))
		for i := range n {
			rows[4*i+1] = uint32(words * i / n)
		}
		h, err := m.Add(data[:words], rows[:4*n])
		if err != nil {
			b.Fatal(err)
		}
		live = append(live, h)
	}
	fragment := func() {
		for range 2048 - len(live)/2 {
			add()
		}
		r.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		for _, h := range live[len(live)/2:] {
			if err := m.Remove(h); err != nil {
				b.Fatal(err)
			}
		}
		live = live[:len(live)/2]
		m.Arm()
	}
	for range 4096 {
		add()
	}
	fragment()
	before := m.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if !m.Armed() {
			b.StopTimer()
			fragment()
			b.StartTimer()
		}
		if err := m.Sweep(arena.SweepLimits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st := m.Stats()
	moves := st.Data.Moves + st.Rows.Moves - before.Data.Moves - before.Rows.Moves
	b.ReportMetric(float64(moves)/float64(b.N), "moves/op")
	b.ReportMetric(float64(st.PatchedWords-before.PatchedWords)/float64(b.N), "patches/op")
	b.ReportMetric(float64(st.Data.BytesMoved+st.Rows.BytesMoved-before.Data.BytesMoved-before.Rows.BytesMoved)/float64(b.N), "bytes/op")
}
