//go:build !js

package main

import (
	"fmt"
	"image/png"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/memory"
)

// The command around the frame loop: flags, the PNG, the summary.

// imageKey is the bindless key of im: its own size, one mip.
func imageKey(im bitmap) bindless.Key {
	return bindless.Key{Format: device.RGBA8Unorm, Width: uint32(im.width), Height: uint32(im.height), Mips: 1}
}

// slabBytes sums, per stream, the bytes the vertex slabs hold for
// meshes (Memory lists a slab's streams one after the other, in order),
// and counts the vertex slabs' buffers and the index slabs.
func slabBytes(bufs []memory.Buffer) (perStream [4]uint64, vertexBuffers, indexSlabs int) {
	for _, b := range bufs {
		switch b.Kind {
		case memory.VertexSlab:
			for _, reg := range b.Regions {
				if reg.Live() {
					perStream[vertexBuffers%len(strides)] += reg.Size
				}
			}
			vertexBuffers++
		case memory.IndexSlab:
			indexSlabs++
		}
	}
	return perStream, vertexBuffers, indexSlabs
}

func run(cfg config, out string) error {
	f, err := os.Create(out) // before the frames: a bad path fails at once
	if err != nil {
		return err
	}
	defer f.Close()
	g, err := openGPU()
	if err != nil {
		return err
	}
	defer g.release()
	res, err := render(g.device, cfg)
	if err == nil {
		err = png.Encode(f, res.image)
	}
	if err != nil {
		os.Remove(out)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	printSummary(os.Stdout, cfg, res)
	fmt.Printf("wrote %s (%dx%d)\n", out, cfg.width, cfg.height)
	return nil
}

// parse checks the flags and fills in the size.
func (c *config) parse(size string, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q (see -help)", args)
	}
	if c.frames < 1 {
		return fmt.Errorf("-frames %d: render at least one frame", c.frames)
	}
	if c.loaders < 1 || c.loaders > slots {
		return fmt.Errorf("-loaders %d: want 1 to %d", c.loaders, slots)
	}
	w, h, ok := strings.Cut(size, "x")
	wi, errw := strconv.ParseUint(w, 10, 32)
	hi, errh := strconv.ParseUint(h, 10, 32)
	if !ok || errw != nil || errh != nil || wi == 0 || hi == 0 || wi > 8192 || hi > 8192 {
		return fmt.Errorf("-size %q: want WIDTHxHEIGHT, each 1 to 8192", size)
	}
	c.width, c.height = uint32(wi), uint32(hi)
	return nil
}

// printSummary writes what the run did.
func printSummary(w io.Writer, cfg config, res *result) {
	st := res.stats
	frames := 0
	for _, h := range st.History {
		if h.Replaced > 0 {
			frames++
		}
	}
	fmt.Fprintf(w, "%d frames, %d loaders: %d meshes added, %d modified, %d removed; %d drawn in the last frame\n",
		st.Frames, cfg.loaders, st.Added, st.Modified, st.Removed, st.Drawn)
	fmt.Fprintf(w, "slabs: %d vertex (%d buffers, one per stream), %d index; the last frame bound vertex slabs %d times, index slabs %d times\n",
		res.vertexSlabs/len(strides), res.vertexSlabs, res.indexSlabs, st.VertexBinds, st.IndexBinds)
	fmt.Fprintf(w, "changes: %d draws rebuilt (Moved), %d slab buffers rebound (Replaced, in %d frames), %d first bound; %d growths, %d shrinks, %d ranges moved\n",
		st.Rebuilt, st.Rebinds, frames, st.Bound, st.Mesh.Growths, st.Mesh.Shrinks, st.Mesh.Moves)
	fmt.Fprintf(w, "vertex bytes, stream slabs / buffers of their own:")
	for i, name := range []string{"position", "normal", "uv", "colour"} {
		fmt.Fprintf(w, " %s %d/%d", name, res.slabBytes[i], res.ownBytes[i])
	}
	b := st.Bindless
	fmt.Fprintf(w, "\ntextures: %d in %d pages, %d moved by Compact; pages hold %d KiB for %d KiB of images (%.2fx)\n",
		b.Registered, b.Pages, st.TexturesMoved, b.BytesHeld>>10, b.BytesUsed>>10, float64(b.BytesHeld)/float64(max(b.BytesUsed, 1)))
}
