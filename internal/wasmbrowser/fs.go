package main

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// The program's file system. Go's js/wasm port reaches files through a
// Node-style globalThis.fs; fs.js gives it one in the page:
//
//   - Reading: any file or directory under the served root (the parent of
//     the module's root, so tests read their testdata and a checkout's
//     siblings), fetched from this server, read-only.
//   - Writing: an in-memory tree under memTmp, the program's TMPDIR (so
//     its os.TempDir), so t.TempDir, os.CreateTemp and the testing
//     package's example output capture work. It lives as long as the page.
//     memTmp is a name no real directory has, so a checkout under /tmp
//     still reads from disk.
//   - Standard output and error go back to the runner in order.

//go:embed fs.js
var fsJS string

// memTmp is the root of the program's in-memory tree, and its TMPDIR.
const memTmp = "/wasmbrowser-tmp"

// root is the directory the page may read under: the parent of the
// directory holding go.mod above the working directory, or the working
// directory itself when there is none.
func root() string {
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := cwd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Dir(dir)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return cwd
		}
		dir = up
	}
}

// fileInfo is what /fs/stat answers.
type fileInfo struct {
	Dir     bool    `json:"dir"`
	Size    int64   `json:"size"`
	Mode    uint32  `json:"mode"`
	MtimeMs float64 `json:"mtimeMs"`
}

// serveFile answers /fs/stat, /fs/file and /fs/readdir for the path in
// the query, which must be absolute and under root; anything else is 404,
// which fs.js turns into ENOENT.
func (s *session) serveFile(w http.ResponseWriter, r *http.Request) {
	p := filepath.Clean(filepath.FromSlash(r.URL.Query().Get("path")))
	if !filepath.IsAbs(p) || s.root == "" || (p != s.root && !strings.HasPrefix(p, s.root+string(filepath.Separator))) {
		http.NotFound(w, r)
		return
	}
	fi, err := os.Stat(p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch r.URL.Path {
	case "/fs/stat":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(fileInfo{
			Dir: fi.IsDir(), Size: fi.Size(), Mode: uint32(fi.Mode().Perm()),
			MtimeMs: float64(fi.ModTime().UnixMilli()),
		})
	case "/fs/file":
		if fi.IsDir() {
			http.Error(w, "a directory", http.StatusBadRequest)
			return
		}
		http.ServeFile(w, r, p)
	case "/fs/readdir":
		entries, err := os.ReadDir(p)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(names)
	}
}
