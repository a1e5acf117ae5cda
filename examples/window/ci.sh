#!/usr/bin/env bash
# CI for examples/window: build it, run it under Xvfb (on lavapipe where
# there is no GPU) for 300 frames, take a screenshot of the screen while the
# window shows the last frame, and check the screenshot: it must show the
# scene (the example's own -check: not blank), and equal, pixel for pixel,
# the last frame that examples/offscreen renders of the same scene at the
# same size.
#
# Needs Xvfb (xvfb), ImageMagick (imagemagick: import, compare), a Vulkan
# driver (mesa-vulkan-drivers) and the headers GLFW builds against:
# libx11-dev libxrandr-dev libxinerama-dev libxcursor-dev libxi-dev
# libxxf86vm-dev libgl-dev libwayland-dev libxkbcommon-dev. .ci/run installs
# them. On failure the files it made are kept and their folder named.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"
# As a user without a login session: the examples must not complain about
# a display they do not use (libwayland's XDG_RUNTIME_DIR error).
unset XDG_RUNTIME_DIR NODEVICE_SELECT

size=640x480
frames=300
work=$(mktemp -d)
xvfb=
fail() {
	echo "examples/window/ci.sh: $*; files in $work" >&2
	[ -f "$work/window.log" ] && sed 's/^/  window: /' "$work/window.log" >&2
	exit 1
}
cleanup() {
	local rc=$?
	if [ -n "$xvfb" ]; then kill "$xvfb" 2>/dev/null || true; fi
	if [ "$rc" = 0 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

echo "== build and vet examples/window"
go build -o "$work/window" .
go vet .
echo "== render the same $frames frames offscreen, $size"
(cd ../.. && go run ./examples/offscreen -frames "$frames" -size "$size" -o "$work/offscreen.png" >/dev/null 2>"$work/offscreen.err") ||
	fail "examples/offscreen failed: $(cat "$work/offscreen.err")"
[ ! -s "$work/offscreen.err" ] || fail "examples/offscreen wrote to stderr: $(cat "$work/offscreen.err")"

# Xvfb picks a free display and writes its number to fd 3.
echo "== Xvfb"
Xvfb -displayfd 3 -screen 0 "${size}x24" -nolisten tcp 3>"$work/display" 2>"$work/xvfb.log" &
xvfb=$!
for _ in $(seq 100); do
	[ -s "$work/display" ] && break
	kill -0 "$xvfb" 2>/dev/null || fail "Xvfb exited: $(cat "$work/xvfb.log")"
	sleep 0.1
done
[ -s "$work/display" ] || fail "Xvfb did not start in 10 s"
export DISPLAY=":$(cat "$work/display")"

echo "== run examples/window on $DISPLAY: $frames frames, then a screenshot"
start=$SECONDS
"$work/window" -frames "$frames" -size "$size" -hold 5s >"$work/window.log" 2>&1 &
win=$!
until grep -qs "^rendered $frames frames" "$work/window.log"; do
	kill -0 "$win" 2>/dev/null || fail "the window exited before its last frame"
	((SECONDS - start < 240)) || fail "no last frame after 240 s"
	sleep 0.1
done
import -window root "$work/shot.png" || fail "import could not take a screenshot"
wait "$win" || fail "the window exited with status $?"
echo "   $frames frames in $((SECONDS - start)) s (with a 5 s hold)"
! grep -q XDG_RUNTIME_DIR "$work/window.log" || fail "the window complained about XDG_RUNTIME_DIR"

echo "== check the screenshot"
"$work/window" -check "$work/shot.png" || fail "the screenshot does not show the scene"
diff=$(compare -metric AE "$work/offscreen.png" "$work/shot.png" "$work/diff.png" 2>&1) || true
[ "$diff" = 0 ] || fail "the screenshot differs from examples/offscreen's frame in $diff pixels (diff.png)"
echo "   equal to examples/offscreen's last frame, pixel for pixel"
