package bindless

import "github.com/gpumem/gpumem/memory"

// Changes appends to dst what changed since the previous call, as
// memory.Change states: a Moved per texture Compact moved (Owner packs
// its old and new Handle: Moved reads them; OldTexture, FromLayer,
// Texture and ToLayer say the same in pages), a Replaced per page grown
// or trimmed (OldTexture and Texture), a Released per page whose texture
// was released. Moves of one texture by two Compact calls are two
// changes. O(changes); it allocates only when dst lacks room.
func (r *Registry[K]) Changes(dst []memory.Change) []memory.Change { return r.changes.Take(dst) }

// Moved returns the old and new handle of the texture a Moved change of a
// Registry names.
func Moved(c memory.Change) (from, to Handle) { return Handle(c.Owner >> 32), Handle(uint32(c.Owner)) }
