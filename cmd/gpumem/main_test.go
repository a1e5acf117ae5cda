package main

import (
	"bytes"
	"strings"
	"testing"
)

// gpumem runs the command in-process and returns its exit status and output.
func gpumem(args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

func TestDispatch(t *testing.T) {
	tests := []struct {
		args   []string
		status int
		stdout string // substring; "" means empty
		stderr string // substring; "" means empty
	}{
		{nil, 2, "", "Commands:"},
		{[]string{"help"}, 0, "replay ", ""},
		{[]string{"-h"}, 0, "Commands:", ""},
		{[]string{"help", "replay"}, 0, "-max-allocs N", ""},
		{[]string{"help", "nope"}, 2, "", `unknown command "nope"`},
		{[]string{"help", "a", "b"}, 2, "", "usage: gpumem help"},
		{[]string{"nope"}, 2, "", "gpumem: unknown command \"nope\"\nRun 'gpumem help' for usage.\n"},
		{[]string{"replay", "-h"}, 0, "", "usage: gpumem replay"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			status, stdout, stderr := gpumem(tt.args...)
			if status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
			check(t, "stdout", stdout, tt.stdout)
			check(t, "stderr", stderr, tt.stderr)
		})
	}
}

func check(t *testing.T, what, got, want string) {
	t.Helper()
	if want == "" && got != "" || !strings.Contains(got, want) {
		t.Errorf("%s =\n%s\nwant it to contain %q", what, got, want)
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		status, stdout, _ := gpumem("help", c.name)
		if status != 0 || !strings.Contains(stdout, "usage: gpumem "+c.name) {
			t.Errorf("help %s: status %d, output\n%s", c.name, status, stdout)
		}
	}
}

// TestUsageErrorIsShort: a bad flag or value gets the flag named and one
// line pointing at help, not the command's whole usage, in every command.
func TestUsageErrorIsShort(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "-bogus"}, {"demo", "-scale", "abc"}, {"demo", "-budget", "lots"},
		{"map", "-x"}, {"replay", "-policy"}, {"devbench", "-iters", "many"},
	} {
		status, stdout, stderr := gpumem(args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		name := args[0]
		if status != 2 || stdout != "" || len(lines) != 2 ||
			!strings.HasPrefix(lines[0], "gpumem "+name+": ") || !strings.Contains(lines[0], args[1]) ||
			lines[1] != "Run 'gpumem help "+name+"' for usage." {
			t.Errorf("gpumem %s: status %d, stdout %q, stderr (%d lines):\n%s", strings.Join(args, " "), status, stdout, len(lines), stderr)
		}
	}
}
