//go:build cgo

package webgpu_test

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// procStatus reads a field of /proc/self/status as a number (VmRSS in
// KiB, Threads).
func procStatus(t *testing.T, field string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.Atoi(strings.Fields(v)[0])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skipf("/proc/self/status has no %s", field)
	return 0
}

// lifecycleCycle uses d for a write, a move and a read, and checks them.
func lifecycleCycle(t *testing.T, d *webgpu.Device, i int) {
	t.Helper()
	b, err := d.CreateBuffer(device.BufferDesc{Label: "cycle", Size: 1 << 20, Usage: device.CopySrc | device.CopyDst | device.Storage})
	if err != nil {
		t.Fatalf("cycle %d: %v", i, err)
	}
	data := bytes.Repeat([]byte{byte(i), byte(i >> 8), 7, 9}, 1024)
	if err := d.WriteBuffer(b, 0, data); err != nil {
		t.Fatalf("cycle %d: write: %v", i, err)
	}
	if err := d.Move(b, []device.Move{{Src: 0, Dst: 64 << 10, Size: uint64(len(data))}}); err != nil {
		t.Fatalf("cycle %d: move: %v", i, err)
	}
	got := make([]byte, len(data))
	if err := d.ReadBuffer(b, 64<<10, got); err != nil {
		t.Fatalf("cycle %d: read: %v", i, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("cycle %d: moved data differs", i)
	}
	b.Release()
}

// lifecycleCycles is how many devices TestLifecycle opens: 1,000 in CI
// (CI=true) and on a GPU machine through scripts/gpu-test, which sets it,
// 100 otherwise, 20 with -short; GPUMEM_LIFECYCLE_CYCLES overrides it.
func lifecycleCycles(t *testing.T) int {
	if s := os.Getenv("GPUMEM_LIFECYCLE_CYCLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("GPUMEM_LIFECYCLE_CYCLES=%q", s)
		}
		return n
	}
	switch {
	case os.Getenv("CI") == "true":
		return 1000
	case testing.Short():
		return 20
	}
	return 100
}

// checkFlat runs cycle n times and fails if resident memory or the thread
// count grows between the end of a warm-up (a tenth of the cycles, at
// least half of them up to 50) and the end: what a device leaves behind
// after its Release adds up over the cycles. On NVIDIA's driver a process
// could open only 29 devices before gpumem's instance was created without
// a descriptor.
//
// Resident memory is a noisy signal (the C heap and the driver keep
// caches that grow in steps, and a loaded machine makes them jumpier), so
// a round over the bound is measured again, n more cycles from where it
// ended: a leak grows in both rounds, noise seldom twice.
func checkFlat(t *testing.T, n int, cycle func(i int)) {
	warm := max(n/10, min(50, n/2))
	for round := range 2 {
		var rss0, threads0 int
		first := 0
		if round == 0 {
			first = warm
		}
		for i := range n {
			if i == first {
				runtime.GC()
				rss0, threads0 = procStatus(t, "VmRSS"), procStatus(t, "Threads")
			}
			cycle(round*n + i)
		}
		runtime.GC()
		rss, threads := procStatus(t, "VmRSS"), procStatus(t, "Threads")
		t.Logf("round %d, %d cycles: resident %d -> %d KiB, threads %d -> %d (measured from cycle %d)", round, n, rss0, rss, threads0, threads, first)
		if threads > threads0+2 {
			t.Fatalf("threads grew from %d to %d", threads0, threads)
		}
		// Flat means under 48 KiB a cycle, on average, after the
		// warm-up: a device left alive costs megabytes (its queues,
		// pools and driver objects), and NVIDIA's driver refuses a
		// process its 64th. Measured: lavapipe 4-7 KiB a cycle (58-235
		// now and then on a loaded 2-core machine, in one round). On an
		// H200 (driver 580) 44 KiB a cycle over 1,000 cycles of this
		// test, with all 1,000 devices opened and the threads flat: not
		// a device kept alive, but the driver's and the C heap's own
		// growth, which decays over the cycles. The binding alone,
		// creating and releasing an instance, adapter and device with no
		// gpumem in the process, grows the same way: 32, 14, 14 and 5 MiB
		// over its second to fifth hundred cycles, against 26, 4, 27 and
		// 0 MiB for webgpu.New and Release.
		grow, cycles := rss-rss0, n-first
		if grow <= 48*cycles {
			return
		}
		if round == 1 {
			t.Errorf("resident memory grew by %d KiB over %d cycles, %d KiB a cycle, in two rounds in a row", grow, cycles, grow/cycles)
			return
		}
		t.Logf("resident memory grew by %d KiB a cycle: measuring again", grow/cycles)
	}
}

// TestLifecycle opens and releases devices in one process, each used for a
// write, a move and a read.
func TestLifecycle(t *testing.T) {
	testdevice.WebGPU(t, webgpu.Options{}) // skips where there is no adapter
	checkFlat(t, lifecycleCycles(t), func(i int) {
		d, err := webgpu.New(webgpu.Options{})
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		lifecycleCycle(t, d, i)
		d.Release()
	})
}

// TestLifecycleWrapped wraps one caller-owned device again and again: each
// Release frees what gpumem made and leaves the device working.
func TestLifecycleWrapped(t *testing.T) {
	raw := testdevice.Raw(t)
	checkFlat(t, lifecycleCycles(t), func(i int) {
		d, err := webgpu.Wrap(raw)
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		lifecycleCycle(t, d, i)
		d.Release()
	})
}
