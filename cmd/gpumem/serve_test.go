package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/scene"
)

// TestServePage builds and serves examples/browser as gpumem serve does,
// opens it in headless Chromium (WebGPU on SwiftShader) for 60 frames and
// checks what the page posts at its end: the status line says every mesh
// byte is intact, and the canvas shows the scene, not "loading..." over an
// empty canvas.
func TestServePage(t *testing.T) {
	testdevice.Long(t) // a js/wasm build and a minute of Chromium
	browser := chromium(t)
	page, err := buildPage()
	if err != nil {
		t.Fatal(err)
	}
	defer page.release()
	results := make(chan pageResult, 1)
	page.done = func(r pageResult) { results <- r }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: page}
	go srv.Serve(ln)
	defer srv.Close()

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// A debugging port on loopback keeps headless Chromium open after the
	// page loaded.
	cmd := exec.CommandContext(ctx, browser, "--headless=new", "--enable-unsafe-webgpu", "--no-sandbox", "--no-first-run",
		"--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"http://"+ln.Addr().String()+"/?frames=60&size=256")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var r pageResult
	select {
	case r = <-results:
	case <-ctx.Done():
		t.Fatalf("the page did not finish in 4 minutes; Chromium's log:\n%s", log.String())
	}
	if !strings.HasSuffix(r.Status, "every mesh byte intact") {
		t.Errorf("status line %q", r.Status)
	}
	data, ok := strings.CutPrefix(r.Canvas, "data:image/png;base64,")
	if !ok {
		t.Fatalf("canvas %.80q: not a PNG data URL", r.Canvas)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if s := img.Bounds().Size(); s.X != 256 || s.Y != 256 {
		t.Errorf("canvas of %v, want 256x256 (?size=256)", s)
	}
	if err := scene.CheckImage(img); err != nil {
		t.Errorf("the canvas: %v", err)
	}
	if os.Getenv("GPUMEM_SCREENSHOT_DIR") != "" {
		os.WriteFile(filepath.Join(os.Getenv("GPUMEM_SCREENSHOT_DIR"), "browser-canvas.png"), b, 0o644)
	}
	t.Log(r.Status)
}
