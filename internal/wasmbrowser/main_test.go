package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Output chunks the page sends out of order are written in order, and the
// exit code is reported only once every chunk the page sent is written.
func TestChunksInOrder(t *testing.T) {
	s := newSession("p.wasm", nil, nil, nil, nil)
	var out, errOut bytes.Buffer
	s.stdout, s.stderr = &out, &errOut
	post := func(target, body string) {
		t.Helper()
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, target, strings.NewReader(body)))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d", target, rec.Code)
		}
	}
	post("/out?fd=1&seq=2", "c")
	post("/out?fd=2&seq=1", "E")
	post("/exit?code=3&chunks=4", "")
	select {
	case code := <-s.exit:
		t.Fatalf("exit %d reported with chunks 0 and 3 missing", code)
	default:
	}
	post("/out?fd=1&seq=0", "a")
	post("/out?fd=1&seq=3", "d")
	select {
	case code := <-s.exit:
		if code != 3 {
			t.Fatalf("exit code %d, want 3", code)
		}
	case <-time.After(time.Second):
		t.Fatal("no exit code after every chunk arrived")
	}
	if out.String() != "acd" || errOut.String() != "E" {
		t.Fatalf("stdout %q, stderr %q; want \"acd\", \"E\"", out.String(), errOut.String())
	}
}

// The page reads files under the root only.
func TestServeFileStaysUnderRoot(t *testing.T) {
	dir := t.TempDir()
	rootDir := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(rootDir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootDir, "pkg", "data.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSession("p.wasm", nil, nil, nil, nil)
	s.root = rootDir
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/fs/file?path="+url.QueryEscape(path), nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(filepath.Join(rootDir, "pkg", "data.txt")); code != http.StatusOK || body != "inside" {
		t.Errorf("a file under the root: %d %q", code, body)
	}
	for _, p := range []string{
		filepath.Join(dir, "secret.txt"),
		filepath.Join(rootDir, "..", "secret.txt"),
		rootDir + "x/secret.txt",
		"pkg/data.txt", // relative: fs.js sends absolute paths only
	} {
		if code, body := get(p); code != http.StatusNotFound {
			t.Errorf("%s: %d %q, want 404", p, code, body)
		}
	}
}

// The program sees CI, GODEBUG and GPUMEM_* of the environment, and its
// own TMPDIR; a test's -test.timeout sets how long it may run.
func TestEnvAndTimeout(t *testing.T) {
	m := env([]string{"CI=true", "GPUMEM_LONG=1", "HOME=/root", "PATH=/bin", "GODEBUG=x=1", "TMPDIR=/var/tmp"})
	if len(m) != 4 || m["CI"] != "true" || m["GPUMEM_LONG"] != "1" || m["GODEBUG"] != "x=1" || m["TMPDIR"] != memTmp {
		t.Errorf("env: %v", m)
	}
	if d := timeout([]string{"-test.v", "-test.timeout=3m0s"}); d != 4*time.Minute {
		t.Errorf("timeout with -test.timeout=3m: %v", d)
	}
	if d := timeout(nil); d != 10*time.Minute {
		t.Errorf("timeout without one: %v", d)
	}
}
