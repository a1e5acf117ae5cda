// Package meshlet keeps batches of meshlets in two self-compacting device
// buffers, one of data words and one of metadata rows, and keeps every
// row's address of its data right as the buffers grow and compact.
//
// # Basics
//
// A batch is some data, in 32-bit words, and one metadata row per meshlet,
// of Options.RowWords words. One word of each row, Options.AddressWord,
// addresses the meshlet's data. Given to Add it is relative to the batch's
// data (0 is the batch's first word); placed, it is absolute: a word index
// into the data buffer. The row layout is the caller's; the manager
// changes no other word of a row.
//
// A Manager holds two arenas (package arena): data, whose elements are
// words, and rows, whose elements are rows. A batch takes one allocation
// in each, made in lockstep: when the rows are refused, the data
// allocation is given back before the error returns. Add uploads the data
// and the rows with their address words made absolute on the CPU. Clone
// copies a batch on the device, data and rows, and patches the copy's
// address words on the device by the distance between the two batches'
// data. Remove gives both allocations back.
//
// The arenas grow when short and compact when fragmented: Sweep moves a
// bounded number of batches per call (call it once a frame), Compact
// packs everything, and an Add or Clone may compact to make room. When a
// batch's data moves, its address words are patched on the device by the
// distance moved; when its rows move, nothing needs patching. Either way
// Changes reports each moved part (PartData, PartRows) once per call to it
// (memory.Change). Lookup says where a batch is now;
// Buffers returns the two buffers, which growth replaces. When both arenas
// move things in one call, each data move's patch is recorded after the
// row moves of that call, so it lands on the rows where they are then; a
// row moved after a patch carries the patched words along, and a batch
// whose data moved twice gets two patches, which add up.
//
// # Invariants
//
// Between calls, for every live batch b with Placement p, and every row i
// below p.Meshlets:
//
//   - words [p.DataOffset, p.DataOffset+p.DataWords) of the data buffer
//     are b's data: as given to Add, or as the GPU wrote them since;
//   - row p.RowOffset+i of the rows buffer is b's row i, whose address word
//     is p.DataOffset plus the relative address given to Add (or, for a
//     clone, its source's address word plus the distance between the two
//     batches' data, when it was cloned);
//   - a failed call changes no batch's contents, only perhaps its place
//     (reported changed) and the buffers' capacity.
//
// Bad input is an error, never a panic: a batch with no data words or no
// rows, rows that are not a whole number of rows, or a relative address
// past the end of the batch's data (ErrInvalidBatch, ErrInvalidAddress;
// an address equal to the data's length, an empty meshlet at the end, is
// accepted). Since a relative address is at most the batch's length, an
// absolute one never passes the data buffer's capacity.
//
// # Caveats
//
// Moves, copies and patches are recorded on the device in call order, and
// rows travel as bytes: what the GPU writes into a batch's rows moves and
// clones with them, and a patch adds its distance to whatever the address
// word holds. A device error other than a refused buffer (a lost
// device) leaves the contents unspecified. Growth replaces a buffer, and
// so does a shrink (Options.ShrinkBelow, or Shrink: the arenas move into
// smaller buffers once their batches unload): anything bound to the old
// one must be rebuilt (compare Buffers, or watch Stats().Data.Growths,
// Stats().Rows.Growths and Stats().Shrinks).
//
// A BatchHandle of one manager means nothing to another, and is not
// detected as foreign when its slot is live there.
//
// A Manager is not safe for concurrent use.
package meshlet
