package handle_test

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gpumem/gpumem/handle"
)

// The owner allocates and frees; a loader goroutine reserves handles
// through a Remote while the owner works; a handle kept past its Free is
// caught by its generation.
func Example() {
	o := handle.New()
	a, _ := o.Allocate()
	b, _ := o.Allocate()
	fmt.Println("allocated", a, b)

	if err := o.Free(a); err != nil {
		fmt.Println(err)
	}
	o.Flush() // make the freed index visible to remote allocators

	var wg sync.WaitGroup
	var loaded handle.Handle
	r := o.Remote()
	wg.Go(func() { loaded, _ = r.Allocate() }) // reuses a's index, next generation
	wg.Wait()
	fmt.Println("remote got", loaded, "live:", o.Live(loaded))

	fmt.Println("a live:", o.Live(a))
	err := o.Free(a)
	fmt.Println("free a again is stale:", errors.Is(err, handle.ErrStale))

	o.Release()
	_, err = r.Allocate()
	fmt.Println(err)
	fmt.Printf("%+v\n", o.Stats())
	// Output:
	// allocated 1.0 2.0
	// remote got 1.1 live: true
	// a live: false
	// free a again is stale: true
	// remote alloc: handle: owner released
	// {Issued:2 Live:2 Buffered:0 Shared:0 Retired:0}
}
