// Command wasmbrowser runs a Go program compiled to js/wasm, a test binary
// above all, in headless Chromium with WebGPU, and exits with the
// program's exit code: the runner `go test -exec` needs.
//
//	go build -o /tmp/wasmbrowser ./internal/wasmbrowser
//	GOOS=js GOARCH=wasm go test -exec /tmp/wasmbrowser ./device/webgpu
//
// It serves the program, Go's wasm_exec.js and a page that runs them on
// 127.0.0.1 (a port of the kernel's choosing), and starts Chromium on the
// page with --headless=new --enable-unsafe-webgpu; on a machine without
// a GPU Chromium offers WebGPU on SwiftShader, its software Vulkan. The
// page sends the program's standard output and error back in order, then
// its exit code; wasmbrowser writes them to its own and exits with that
// code. It needs no DevTools protocol and no module beyond the standard
// library.
//
// The program sees the arguments after the wasm file as os.Args[1:], and
// of the environment only CI and the variables whose names start with
// GPUMEM_ or GODEBUG (a browser page has no environment of its own). Its
// working directory is wasmbrowser's; it reads files under the parent of
// the module's root and writes under its TMPDIR, in memory (see fs.go). The
// page defines
// globalThis.wasm = {instance}, as github.com/oliverbestmann/webgpu's
// queue writes expect of a page.
//
// GPUMEM_BROWSER_LOG=1 passes the browser's own log through to standard
// error, with the page's console messages (WebGPU's uncaptured errors
// among them).
//
// Chromium is the first of GPUMEM_CHROMIUM, chromium, chromium-browser,
// google-chrome found. wasmbrowser gives the program as long as
// -test.timeout says, plus a minute (ten minutes without one), and kills
// the browser when the program ends or time runs out; a page that fails
// to load or throws outside Go exits 2 with the browser's message.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run runs the wasm file args[0] with args[1:] and returns its exit code,
// or 2 when it could not run it to the end.
func run(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: wasmbrowser program.wasm [args...]")
		return 2
	}
	wasm, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmbrowser:", err)
		return 2
	}
	execJS, err := wasmExec()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmbrowser:", err)
		return 2
	}
	browser, err := chromium()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmbrowser:", err)
		return 2
	}
	limit := timeout(args[1:])
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()

	s := newSession(filepath.Base(args[0]), args[1:], env(os.Environ()), wasm, execJS)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmbrowser:", err)
		return 2
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	defer srv.Close()

	profile, err := os.MkdirTemp("", "wasmbrowser-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmbrowser:", err)
		return 2
	}
	defer os.RemoveAll(profile)
	var log bytes.Buffer
	cmd := exec.CommandContext(ctx, browser, browserFlags(profile, "http://"+ln.Addr().String()+"/")...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if os.Getenv("GPUMEM_BROWSER_LOG") == "1" {
		// The browser's own log, with the page's console messages and
		// WebGPU's uncaptured errors.
		cmd.Args = append(cmd.Args[:1], append([]string{"--enable-logging=stderr", "--v=0"}, cmd.Args[1:]...)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "wasmbrowser: start", browser+":", err)
		return 2
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()

	select {
	case code := <-s.exit:
		return code
	case msg := <-s.failed:
		fmt.Fprintln(os.Stderr, "wasmbrowser: the page failed:", msg)
	case err := <-exited:
		exited <- err
		fmt.Fprintf(os.Stderr, "wasmbrowser: %s exited before the program did (%v):\n%s\n", browser, err, tail(log.Bytes(), 4000))
	case <-ctx.Done():
		fmt.Fprintf(os.Stderr, "wasmbrowser: the program did not exit within %v\n", limit)
	}
	return 2
}

// browserFlags are Chromium's flags: headless, WebGPU on whatever adapter
// it finds (SwiftShader without a GPU), a throwaway profile, no sandbox
// (CI runs as root, where Chromium's sandbox refuses to start).
func browserFlags(profile, url string) []string {
	return []string{
		"--headless=new",
		"--enable-unsafe-webgpu",
		"--no-sandbox",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-extensions",
		"--disable-background-networking",
		"--disable-dev-shm-usage",
		"--user-data-dir=" + profile,
		// Headless Chromium exits once the page loaded unless told to
		// stay: a debugging port on loopback keeps it open.
		"--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0",
		url,
	}
}

// chromium finds the browser.
func chromium() (string, error) {
	if p := os.Getenv("GPUMEM_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found (apt-get install chromium, or set GPUMEM_CHROMIUM)")
}

// wasmExec reads Go's wasm_exec.js from the toolchain that built the
// program: the go command on PATH.
func wasmExec() ([]byte, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	var firstErr error
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// timeout is how long the program may run: its -test.timeout plus a
// minute for the browser, or ten minutes.
func timeout(args []string) time.Duration {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "-test.timeout="); ok {
			if d, err := time.ParseDuration(v); err == nil && d > 0 {
				return d + time.Minute
			}
		}
	}
	return 10 * time.Minute
}

// env is the part of environ the program sees.
func env(environ []string) map[string]string {
	m := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && (k == "CI" || k == "GODEBUG" || strings.HasPrefix(k, "GPUMEM_")) {
			m[k] = v
		}
	}
	m["TMPDIR"] = memTmp
	return m
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// session serves one run's page and collects what it sends back.
type session struct {
	name    string
	root    string // where the page may read files; see fs.go
	config  []byte
	wasm    []byte
	execJS  []byte
	stdout  io.Writer // where the program's standard output goes
	stderr  io.Writer
	exit    chan int
	failed  chan string
	mu      sync.Mutex
	next    int            // sequence number of the next chunk to write
	waiting map[int]output // chunks that arrived before an earlier one
	last    int            // chunks the page sent in all; -1 until it exits
	code    int
	done    bool
}

type output struct {
	fd   int
	data []byte
}

func newSession(name string, args []string, env map[string]string, wasm, execJS []byte) *session {
	cwd, _ := os.Getwd()
	config, _ := json.Marshal(struct {
		Args []string          `json:"args"`
		Env  map[string]string `json:"env"`
		Cwd  string            `json:"cwd"`
		Tmp  string            `json:"tmp"`
	}{append([]string{name}, args...), env, filepath.ToSlash(cwd), memTmp})
	return &session{
		root: root(), stdout: os.Stdout, stderr: os.Stderr,
		name: name, config: config, wasm: wasm, execJS: execJS,
		exit: make(chan int, 1), failed: make(chan string, 1),
		waiting: map[int]output{}, last: -1,
	}
}

func (s *session) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	case "/wasm_exec.js":
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(s.execJS)
	case "/program.wasm":
		w.Header().Set("Content-Type", "application/wasm")
		w.Write(s.wasm)
	case "/fs.js":
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, "const config = %s;\n%s", s.config, fsJS)
	case "/fs/stat", "/fs/file", "/fs/readdir":
		s.serveFile(w, r)
	case "/out":
		seq, err1 := strconv.Atoi(r.URL.Query().Get("seq"))
		fd, err2 := strconv.Atoi(r.URL.Query().Get("fd"))
		data, err3 := io.ReadAll(r.Body)
		if err := errors.Join(err1, err2, err3); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.write(seq, output{fd, data})
	case "/exit":
		code, err1 := strconv.Atoi(r.URL.Query().Get("code"))
		n, err2 := strconv.Atoi(r.URL.Query().Get("chunks"))
		if err := errors.Join(err1, err2); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.last, s.code = n, code
		s.finish()
		s.mu.Unlock()
	case "/fail":
		msg, _ := io.ReadAll(r.Body)
		select {
		case s.failed <- string(msg):
		default:
		}
	case "/favicon.ico":
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

// write writes chunk seq, and every chunk after it that arrived early,
// once the chunks before it are written.
func (s *session) write(seq int, o output) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting[seq] = o
	for {
		o, ok := s.waiting[s.next]
		if !ok {
			break
		}
		delete(s.waiting, s.next)
		s.next++
		if o.fd == 2 {
			s.stderr.Write(o.data)
		} else {
			s.stdout.Write(o.data)
		}
	}
	s.finish()
}

// finish reports the exit code once the page has exited and every chunk
// it sent is written. s.mu is held.
func (s *session) finish() {
	if s.done || s.last < 0 || s.next < s.last {
		return
	}
	s.done = true
	s.exit <- s.code
}

// page loads the program and runs it with the configuration /config
// gives. Output goes back as numbered chunks (fetches may arrive out of
// order); the exit code goes last, with the number of chunks sent. fs.js
// is the program's file system.
const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>wasmbrowser</title></head>
<body>
<script src="/fs.js"></script>
<script src="/wasm_exec.js"></script>
<script>
(async () => {
	const fail = (msg) => fetch("/fail", {method: "POST", body: String(msg)});
	// A callback the program left pending (a promise of the browser's
	// WebGPU it did not wait for) may fire after the program exited;
	// wasm_exec then throws. The program's output and exit code are
	// final by then, so that error is not the program's failure.
	let go = null;
	const late = (msg) => go && go.exited && String(msg).includes("Go program has already exited");
	window.addEventListener("error", (e) => {
		const msg = e.error && e.error.stack || e.message;
		if (late(msg)) {
			e.preventDefault();
			return;
		}
		fail("uncaught: " + msg);
	});
	window.addEventListener("unhandledrejection", (e) => {
		const msg = e.reason && e.reason.stack || e.reason;
		if (late(msg)) {
			e.preventDefault();
			return;
		}
		fail("unhandled rejection: " + msg);
	});
	try {
		go = new Go();
		go.argv = config.args;
		go.env = config.env;
		let code = 0;
		go.exit = (c) => { code = c; };
		const {instance} = await WebAssembly.instantiateStreaming(fetch("/program.wasm"), go.importObject);
		// The WebGPU binding's own queue writes read wasm memory through
		// this global, which its pages define.
		globalThis.wasm = {instance};
		await go.run(instance);
		await Promise.all(outputSent);
		await fetch("/exit?code=" + code + "&chunks=" + outputChunks(), {method: "POST"});
	} catch (e) {
		await Promise.all(outputSent);
		await fail(e && e.stack || e);
	}
})();
</script>
</body></html>
`
