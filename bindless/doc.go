// Package bindless is a registry of textures kept as layers of shared
// 2D-array textures, so a shader reaches any of them through a few
// bindings and a 32-bit handle.
//
// # Basics
//
// Textures that share a Key (format, width, height, mip count, sample
// count) live in one bucket. A bucket is a list of pages, each a
// 2D-array texture of LayersPerPage layers; a texture is one layer of one
// page. Pages get a global index, in creation order, across all buckets;
// a renderer binds page i at binding slot i (Registry.Pages lists them in
// that order) and a shader reads texture h at
//
//	page h >> 16, layer h & 0xffff
//
// A Handle is that packed value. It is stable for the texture's life
// unless the caller calls Compact, the one call that moves textures:
// Update rewrites the layer's texels, never moves it, and neither does
// Shrink. Unregister frees the layer and a later Register reuses it:
// registrations take the lowest free layer of their bucket (lowest page,
// then lowest layer), so layers in use gather at the low end of the
// lowest pages and the pages' high ends and last pages empty out for
// Shrink. A page is grown, recreated or added only when every layer of
// its bucket's live pages is taken, and Version changes exactly when the
// pages do (one added, recreated, grown, trimmed or released) or Compact
// moves a texture, so a bind group (and a table of handles) built at one
// version is valid while Version stays. With Options.PageAhead the
// texture of a bucket's next page is made before that, off the caller's
// goroutine, and the page is added when a registration needs it, as
// without (ahead.go).
//
// Textures are registered by a source id of the caller's (a path, an
// asset id): Register with an id that is registered already returns its
// handle and writes nothing. Lookups by id (Handle) and by handle
// (Source, Locate) are O(1).
//
// # Textures of any size
//
// Register files a texture under its exact Key, so images of sizes
// nobody shares (text labels sized to their text) would each take a
// page. RegisterSized files an image of any size W x H under its size
// class (ClassOf): W and H each rounded up to a power of two, so a
// 2378x111 label lies in a layer of the 4096x128 class. The image fills
// the layer's top-left corner and its last column and row repeat into
// the rest, so bilinear sampling and mips at its edges see what
// clamp-to-edge sampling of the image alone sees. Region(h) gives the
// image's size and Scale the factors (W/classW, H/classH) a shader
// multiplies its texture coordinates by; they hold at every mip, and
// texel coordinates need none. A class carries the mips asked for, down
// to where its shorter side is one texel. Sized textures have the same
// Handle, and Compact, Shrink, Changes and Stats treat their pages as
// any others; they never share a bucket with exact textures.
//
// The waste bound: a class layer holds less than 4 times its image's
// bytes, mips included (less than twice on each axis). A sized bucket's
// pages start at one layer and double as they fill, so while textures
// are only registered its pages hold less than 8 times their images'
// bytes, and after Compact (every page trimmed to its layers in use)
// less than 4 times. Stats().BytesHeld over BytesUsed is the measure.
// Repeat addressing is the shader's: it wraps its coordinate before
// scaling, and bilinear filtering across the seam reads the repeated
// edge, not the opposite one.
//
// Three 1x1 RGBA8Unorm textures exist from the start: White (255, 255,
// 255, 255) at handle 0, Black (0, 0, 0, 255) and FlatNormal (128, 128,
// 255, 255), a tangent-space normal that perturbs nothing.
//
// # Giving memory back
//
// Pages are never released by Unregister: a page whose textures all
// unloaded keeps its memory for the next ones. Shrink gives memory back
// without moving a texture, and returns the bytes, for a budget's
// reclaimer (package budget) or a level change:
//
//   - It releases the texture of every page that holds no texture in
//     use. A released page is vacant: it keeps its index, since indices
//     are binding slots and handles, and holds no texture (nil in Pages,
//     absent from Memory, counted in Stats().Vacant) until a registration
//     of its bucket needs a page again, which recreates it at the same
//     index before adding any. Vacant pages at the end of the list are
//     dropped (NumPages falls).
//   - It trims every page whose layers in use all lie in its lower half
//     (the highest in use h, h+1 at most half its layers): the page gets
//     a texture of exactly layers 0..h, those in use copied, and the old
//     one is released. A registration that finds no free layer grows the
//     bucket's lowest trimmed page back, doubling its layers (at most
//     LayersPerPage), before it recreates a higher vacant page or adds
//     one. Trimming only below half and growing by doubling keep a page
//     from being trimmed and grown over and over.
//
// A trim or a growth the device or a budget refuses changes nothing: the
// old texture stays, with every layer. Stats().PagesReleased,
// PagesTrimmed and BytesReleased count what Shrink gave back, PagesGrown
// the growths.
//
// Shrink cannot give back a page that keeps one texture in use at its
// top: after a zone unload the freed layers lie below live ones, and a
// handle never moves on its own. Compact, opt-in, moves textures to give
// that memory back: in each bucket it moves the texture at the highest
// registered layer into the lowest available layer, one layer copy on
// the device each (every mip and sample), until the textures in use fill
// the bottom of the bucket, then releases the emptied pages and trims
// every live page to exactly its layers in use (Shrink trims only pages
// half empty). The defaults never move. Each texture moved gets a new
// handle, reported by Changes with its old one (a memory.Change that
// Moved reads): the caller rewrites its materials or handle tables from
// them and rebuilds its bind groups (Version changes). Work submitted before still reads the old
// layers, since device work runs in call order and pages are released
// only after the GPU finishes the work recorded on them; work recorded
// after must use the new handles. A move is a copy, then a commit: a
// copy the device refuses leaves that texture where it was and ends the
// moves, so every id still names a layer holding its texels.
// Stats().TexturesMoved counts the moves.
//
// # Limits
//
// Handles have 16 bits of page and 16 of layer: LayersPerPage is at most
// the device's MaxArrayLayers (and 65536), the page count at most
// Options.MaxPages (and 65536), each bucket's at most
// Options.MaxPagesPerBucket (vacant pages count: they keep their slots). A
// registration that needs a page beyond those
// returns ErrFull; it never panics. Multisampled buckets hold one layer per
// page (WebGPU allows no more).
//
// # Invariants
//
//   - Every registered id has one handle; the handle's layer belongs to it
//     alone; Source(Handle(id)) is id.
//   - A page's texture has its capacity in layers, 1 to LayersPerPage;
//     each of those layers is registered, a default, free or unused, and
//     a handle of a layer past the capacity names nothing.
//   - A vacant page holds no layer; the last page is never vacant, and
//     page 0 (the defaults') never is.
//   - A failed call changes nothing the caller can see: no handle, no page,
//     no version. (Compact, whose moves commit one by one, keeps the moves
//     made before a failure, reported by Changes, and still releases
//     and trims pages as it does without one.)
//
// # Caveats
//
// A layer freed by Unregister may be rewritten by the next Register. Work
// submitted before that write still reads the old texels (device work runs
// in call order); a frame recorded after it reads the new ones, so a
// renderer stops drawing with a handle before unregistering it.
//
// A Registry is not safe for concurrent use; loading goroutines stage
// registrations through Loaders, which TakeLoaded carries out.
package bindless
