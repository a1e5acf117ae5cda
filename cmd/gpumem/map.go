package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpumem/gpumem/inspect"
)

const mapUsage = `usage: gpumem map [flags] DUMP.json

Draw the memory map of a dump (as gpumem demo -dump writes, or
inspect.Dump.WriteJSON): a bar per buffer, allocations colored by owner
kind, bin-rounding slack lighter, free space gray. The format follows the
extension of -o: .html (a self-contained page with hover text), .svg or
.png. DUMP.json "-" reads standard input.

Flags:
`

func runMap(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("map", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), mapUsage)
		fs.PrintDefaults()
	}
	out := fs.String("o", "map.html", "write the map to `FILE` (.html, .svg or .png)")
	files, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usagef("want one dump file, got %d", len(files))
	}
	write, err := mapWriter(*out)
	if err != nil {
		return err
	}
	if err := checkWritable(*out); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	name := files[0]
	var in io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	d, err := inspect.ReadJSON(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := write(&buf, &d); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d buffers, %d allocations)\n", *out, len(d.Buffers), d.Totals.Allocations)
	return nil
}

// mapWriter returns the renderer for the output file's extension.
func mapWriter(out string) (func(io.Writer, *inspect.Dump) error, error) {
	switch strings.ToLower(filepath.Ext(out)) {
	case ".html", ".htm":
		return inspect.WriteHTML, nil
	case ".svg":
		return inspect.WriteSVG, nil
	case ".png":
		return inspect.WritePNG, nil
	}
	return nil, usagef("-o %q: unknown format; the file name must end in .html, .svg or .png", out)
}
