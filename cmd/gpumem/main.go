// Command gpumem is the gpumem command line: tools to study GPU memory
// allocation patterns with the gpumem allocators.
//
// Usage:
//
//	gpumem <command> [flags] [arguments]
//	gpumem help [command]
//
// Each command lives in a file of its name and is one entry of the commands
// table below. Every command takes its flags before, after or between its
// arguments (gpumem replay a.trace -json b.trace); "--" ends the flags. Exit status: 0 on success, 1 when the command failed, 2 for a
// usage error (unknown command, bad flag or argument).
//
// default.pgo is a CPU profile of the offset package's replay benchmark,
// which go build uses for profile-guided optimisation of this command: it
// inlines Allocate and Free into the replay loop (about 5% off replay's
// ns/op on the shared traces). Regenerate it after changing the allocator's
// hot paths, from the repository root:
//
//	go test -run XXX -bench 'Replay/.*/exact' -cpuprofile cmd/gpumem/default.pgo ./offset/
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// A command is one subcommand of gpumem. run parses its own flags from args
// with parseArgs and returns nil, flag.ErrHelp after -h (its usage
// written), a *usageError, or any other error for a failure.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands is the table of subcommands, in the order help lists them.
var commands = []command{
	{"replay", "replay allocation traces against the offset allocator", runReplay},
	{"devbench", "measure buffer moves (copy and compute paths) on a WebGPU adapter", runDevbench},
	{"demo", "run a scene-streaming simulation and write a report with memory maps", runDemo},
	{"map", "draw the memory map of a dump as HTML, SVG or PNG", runMap},
	{"serve", "build examples/browser for the browser and serve it on this machine", runServe},
}

func main() {
	cleanup := quietLoader()
	status := run(os.Args[1:], os.Stdout, os.Stderr)
	cleanup()
	os.Exit(status)
}

// quietLoader turns off Mesa's device-select Vulkan layer
// (NODEVICE_SELECT=1) unless the environment says otherwise, before any
// device opens, and returns what restores the environment. The command
// draws on no display, and the layer asks Wayland which GPU drives one:
// without a login session (no XDG_RUNTIME_DIR) libwayland prints "error:
// XDG_RUNTIME_DIR is invalid or not set in the environment." at every
// adapter request. WebGPU picks among all adapters without the layer.
func quietLoader() (cleanup func()) {
	if _, set := os.LookupEnv("NODEVICE_SELECT"); set {
		return func() {}
	}
	os.Setenv("NODEVICE_SELECT", "1")
	return func() { os.Unsetenv("NODEVICE_SELECT") }
}

// parseArgs parses fs's flags from args, which may come before, after or
// between the command's arguments, and returns the arguments in order.
// "--" ends the flags: every argument after it is an argument. The error
// is nil, flag.ErrHelp (after fs.Usage wrote the whole usage), or a
// *usageError naming the bad flag: a typo gets two lines, not the help.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				fs.SetOutput(out)
				usage()
				return nil, err
			}
			return nil, &usageError{msg: err.Error()}
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return append(rest, left...), nil
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// flagSet reports whether the command line set fs's flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// usageError is an error in how a command was called (exit status 2).
type usageError struct {
	msg string
}

func (e *usageError) Error() string { return e.msg }

// usagef returns a *usageError with a formatted message.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// run runs gpumem with the arguments after the program name and returns the
// exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return help(rest, stdout, stderr)
	}
	cmd, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "gpumem: unknown command %q\nRun 'gpumem help' for usage.\n", name)
		return 2
	}
	return exitStatus(cmd, cmd.run(rest, stdout, stderr), stderr)
}

// exitStatus reports err on stderr and returns the exit status for it.
func exitStatus(cmd command, err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "gpumem %s: %s\nRun 'gpumem help %s' for usage.\n", cmd.name, ue.msg, cmd.name)
		return 2
	}
	fmt.Fprintf(stderr, "gpumem %s: %v\n", cmd.name, err)
	return 1
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// help prints the command list, or one command's usage, on stdout.
func help(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		usage(stdout)
		return 0
	case 1:
		cmd, ok := lookup(args[0])
		if !ok {
			fmt.Fprintf(stderr, "gpumem help: unknown command %q\nRun 'gpumem help' for usage.\n", args[0])
			return 2
		}
		// A command prints its usage for -h; send it to stdout.
		return exitStatus(cmd, cmd.run([]string{"-h"}, stdout, stdout), stderr)
	}
	fmt.Fprintln(stderr, "usage: gpumem help [command]")
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, "gpumem: GPU memory management tools.\n\nUsage:\n\n\tgpumem <command> [flags] [arguments]\n\nCommands:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'gpumem help <command>' for a command's flags.\n")
}

// checkWritable reports whether the file name can be written, without
// changing it: an existing file is opened for writing and closed, a new one
// created and removed. Commands call it before their long work, so a bad
// output path fails at once.
func checkWritable(name string) error {
	if fi, err := os.Stat(name); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", name)
		}
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(name)
}
