package bindless_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// TestLoaders: 8 goroutines stage registrations, sized ones and
// unregistrations through their Loaders while the owner takes them each
// frame; at the end every texture a loader kept is registered with its
// texels, and a bad one is reported by TakeLoaded, not lost. Run it with
// -race.
func TestLoaders(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		r, err := bindless.New[int](dev, bindless.Options{LayersPerPage: 8, MaxPages: 64})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		const loaders, each = 8, 24
		ls := make([]*bindless.Loader[int], loaders)
		for i := range ls {
			ls[i] = r.NewLoader()
		}
		type tex struct {
			key    bindless.Key
			pixels []byte
		}
		kept := make([]map[int]tex, loaders)
		var wg sync.WaitGroup
		for g := range loaders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := map[int]tex{}
				kept[g] = mine
				for i := range each {
					id := g*1000 + i
					w, h := uint32(4+4*(i%3)), uint32(4+2*(g%2))
					px := bytes.Repeat([]byte{byte(id), byte(id >> 8), byte(g), 255}, int(w*h))
					k := bindless.Key{Format: device.RGBA8Unorm, Width: w, Height: h}
					var err error
					if i%2 == 0 {
						err = ls[g].Register(id, k, px)
					} else {
						err = ls[g].RegisterSized(id, k, px)
					}
					if err != nil {
						t.Error(err)
						return
					}
					mine[id] = tex{k, px}
					if i%5 == 4 {
						if err := ls[g].Unregister(id - 1); err != nil {
							t.Error(err)
							return
						}
						delete(mine, id-1)
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		var failed []bindless.Failed[int]
		// The owner's frames. The pause between them gives the loaders
		// their turn where goroutines do not preempt (js/wasm).
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
				time.Sleep(100 * time.Microsecond)
			}
			failed = r.TakeLoaded(failed)
			if err := bindless.Check(r); err != nil {
				t.Fatal(err)
			}
		}
		if len(failed) != 0 {
			t.Fatalf("failed: %v", failed)
		}
		n := 0
		for _, mine := range kept {
			for id, tx := range mine {
				n++
				h, ok := r.Handle(id)
				if !ok {
					t.Fatalf("texture %d not registered", id)
				}
				tex, layer, _ := r.Locate(h)
				got := make([]byte, len(tx.pixels))
				if _, sized := r.Region(h); sized {
					continue // its layer is padded; sized_test reads those
				}
				if err := dev.ReadTexture(tex, layer, 0, got); err != nil || !bytes.Equal(got, tx.pixels) {
					t.Fatalf("texture %d: texels differ (%v)", id, err)
				}
			}
		}
		if r.Len() < n {
			t.Fatalf("%d registered, the loaders kept %d", r.Len(), n)
		}
		// A bad registration fails at TakeLoaded, with its id.
		if err := ls[0].Register(-1, bindless.Key{Format: device.RGBA8Unorm, Width: 4, Height: 4}, []byte{1}); err != nil {
			t.Fatal(err)
		}
		if f := r.TakeLoaded(nil); len(f) != 1 || f[0].ID != -1 || !errors.Is(f[0].Err, bindless.ErrInvalidSize) {
			t.Fatalf("bad registration: %+v", f)
		}
		r.Release()
		if err := ls[1].Unregister(3); !errors.Is(err, device.ErrReleased) {
			t.Fatalf("after Release: %v", err)
		}
	})
}
