// Package memory is how every gpumem manager shows the device memory it
// holds, read-only: its buffers, the regions in them with their owners, and
// statistics, as plain values in one vocabulary.
//
// # Basics
//
// A Holder is anything that holds device memory and can show it: Memory
// returns a snapshot, one Buffer per device buffer (or texture array) it
// holds. Every manager is a Holder: mesh.Allocator (its slabs and the
// buffers of their own), meshlet.Manager (its two arenas),
// bindless.Registry (its texture pages), ring.Buffer and ring.Frame (the
// frames in flight), pool.Pool (its buffers, leased or idle); an
// arena.Arena becomes one through its Holder method. Package inspect turns any set of
// holders into a dump in one call (inspect.Snapshot), draws its memory
// maps and writes it as JSON.
//
// A Buffer's Kind says what it is and which manager holds it (a vertex
// slab, a texture page, a pool buffer; see Kind), with the properties a
// program acts on: whether its allocations move (Compacts), whether a new
// or replaced one means rebuilding bindings (Rebinds). Its Usage (or a
// texture array's TextureUsage) are the device's flags.
//
// A Buffer's Regions tile [0, CapacityBytes) in address order: live
// allocations, each with its owner's Kind (what the bytes are: "vertex",
// "index", "meshlet-data", "texture", "ring", ...) and Name (who holds
// them: a handle, a source id), and free regions. Its Stats sum the
// regions and carry the history the manager counts (growths, moves,
// bytes moved and copied).
//
// Units: every offset and size is in bytes. An allocation's Size is what
// its allocator holds for it; Used is what its owner asked for; Size-Used
// is rounding slack (bins, slots, alignment).
//
// # Building a Buffer
//
// arena.Arena's Snapshot converts an arena's regions and statistics,
// naming each allocation from its arena.Region (its owner tag); NewBuffer
// builds one from the live regions of a manager that keeps its own
// records (the gaps become free regions), and Block one of a buffer
// filled from its start.
// Each measures the Stats from the regions; WithHistory adds the history
// only the manager knows.
//
// # What changed
//
// Every manager (arena.Arena, mesh.Allocator, meshlet.Manager,
// bindless.Registry, ring.Buffer) reports what changed since its
// consumer last asked in one shape, Change, through one method,
// Changes(dst []Change) []Change: allocations moved, buffers replaced,
// buffers and pages released. Change states the rules once (coalescing,
// the bound, how long an old buffer stays valid); ChangeLog keeps them
// for a manager. A renderer rebinds and rewrites draw data only when told.
// Callbacks remain only inside gpumem (arena.Options.OnMove, the hook the
// managers built on arenas translate).
//
// # Caveats
//
// A snapshot is a copy: it does not change when the manager does, and it
// holds no device object. Taking one costs O(regions) and allocates them.
// Nothing in the package keeps state; its functions are safe for
// concurrent use on distinct values (a Holder's Memory is as safe as its
// manager: not concurrently with the manager's other calls).
package memory
