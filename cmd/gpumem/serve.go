package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
)

const serveUsage = `usage: gpumem serve [flags]

Build examples/browser (the scene streaming through gpumem on the
browser's WebGPU, its memory map redrawn beside it) for js/wasm, serve it
on this machine and print its URL. Open the URL in a browser with WebGPU
(Chromium or Chrome; on Linux without a GPU start it with
--enable-unsafe-webgpu). The build goes to a temporary folder, removed when
the command stops; it needs the go command, and is run in the current
folder (gpumem's module or one that requires it).

The page's query sets the program's flags: ?frames=60&size=256. When the
run ends, the page reports its status line here.

Flags:
`

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:8080", "serve on `host:port` (port 0: any free port)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("unexpected arguments: %s (serve takes flags only)", strings.Join(rest, " "))
	}
	fmt.Fprintln(stderr, "building examples/browser for js/wasm...")
	page, err := buildPage()
	if err != nil {
		return err
	}
	defer page.release()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	page.done = func(r pageResult) { fmt.Fprintf(stdout, "the page finished: %s\n", r.Status) }
	srv := &http.Server{Handler: page}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintf(stdout, "serving examples/browser at http://%s/ (Ctrl-C stops)\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// browserPage is examples/browser built for js/wasm: its index.html, the
// program and Go's wasm_exec.js, served from dir. done, if set, is called
// with what the page posts to /done at the end of its run.
type browserPage struct {
	dir  string
	done func(pageResult)
}

// pageResult is what examples/browser's page posts when its run ends: its
// status line and the canvas, as a data URL of a PNG.
type pageResult struct {
	Status string `json:"status"`
	Canvas string `json:"canvas"`
}

// buildPage builds examples/browser into a temporary folder, with the
// go command on PATH, from the current folder's module.
func buildPage() (*browserPage, error) {
	dir, err := os.MkdirTemp("", "gpumem-serve-")
	if err != nil {
		return nil, err
	}
	p := &browserPage{dir: dir}
	const pkg = "github.com/gpumem/gpumem/examples/browser"
	goCmd := func(args ...string) ([]byte, error) {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		return out, err
	}
	src, err := goCmd("list", "-f", "{{.Dir}}", pkg)
	if err == nil {
		_, err = goCmd("build", "-o", filepath.Join(dir, "browser.wasm"), pkg)
	}
	var root []byte
	if err == nil {
		root, err = goCmd("env", "GOROOT")
	}
	if err == nil {
		err = copyFile(filepath.Join(dir, "index.html"), filepath.Join(strings.TrimSpace(string(src)), "index.html"))
	}
	if err == nil {
		err = copyFile(filepath.Join(dir, "wasm_exec.js"), filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "wasm_exec.js"))
	}
	if err != nil {
		p.release()
		return nil, err
	}
	return p, nil
}

func copyFile(dst, src string) error {
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, b, 0o644)
	}
	return err
}

func (p *browserPage) release() { os.RemoveAll(p.dir) }

func (p *browserPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/done" && r.Method == http.MethodPost {
		var res pageResult
		if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&res); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if p.done != nil {
			p.done(res)
		}
		return
	}
	http.FileServer(http.Dir(p.dir)).ServeHTTP(w, r)
}
