// Package cli is the small subcommand framework shared by the dispatcher and
// runner binaries: help, version, usage errors (exit 2) and clean exits.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// Version is stamped at build time with -ldflags "-X .../internal/core/cli.Version=…".
var Version = "dev"

// Env is what a command may touch of the outside world, so tests can run
// commands in-process with their own stdin, stdout and environment.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// OSEnv is the process's real environment.
func OSEnv() *Env {
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// Env returns the value of an environment variable.
func (e *Env) Env(key string) string {
	if e.Getenv == nil {
		return os.Getenv(key)
	}
	return e.Getenv(key)
}

// Command is one subcommand.
type Command struct {
	Name    string
	Summary string
	// Run gets the arguments after the subcommand name. Returning a
	// *UsageError prints the command's usage and exits 2; an *ExitError
	// exits with its code; any other error is printed and exits 1.
	Run func(ctx context.Context, env *Env, args []string) error
}

// UsageError means the command line itself was wrong. Usage, when set,
// writes the command's usage (App.Main prints it to stderr).
type UsageError struct {
	Msg   string
	Usage func(w io.Writer)
}

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// ExitError ends the program with Code after printing Err (when non-nil).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// App is a binary made of subcommands.
type App struct {
	Name     string
	Summary  string
	commands map[string]*Command
}

// Register adds a subcommand; it panics on a duplicate name because that is a
// programming error caught by any test that builds the app.
func (a *App) Register(c *Command) {
	if a.commands == nil {
		a.commands = map[string]*Command{}
	}
	if _, dup := a.commands[c.Name]; dup {
		panic("cli: duplicate command " + c.Name)
	}
	a.commands[c.Name] = c
}

// Usage writes the top-level help.
func (a *App) Usage(w io.Writer) {
	fmt.Fprintf(w, "%s — %s\n\nUsage:\n  %s <command> [flags]\n\nCommands:\n", a.Name, a.Summary, a.Name)
	names := make([]string, 0, len(a.commands))
	for n := range a.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, a.commands[n].Summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's flags. '%s --version' prints the version.\n", a.Name, a.Name)
}

// Main runs the app on args (without the program name) and returns the exit code.
func (a *App) Main(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		a.Usage(env.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		a.Usage(env.Stdout)
		return 0
	case "--version", "-version", "version":
		fmt.Fprintf(env.Stdout, "%s %s\n", a.Name, Version)
		return 0
	}
	cmd, ok := a.commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "%s: unknown command %q\n\n", a.Name, args[0])
		a.Usage(env.Stderr)
		return 2
	}
	err := cmd.Run(ctx, env, args[1:])
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "%s %s: %s\n", a.Name, cmd.Name, ue.Msg)
		if ue.Usage != nil {
			fmt.Fprintln(env.Stderr)
			ue.Usage(env.Stderr)
		} else {
			fmt.Fprintf(env.Stderr, "Run '%s %s --help' for usage.\n", a.Name, cmd.Name)
		}
		return 2
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(env.Stderr, "%s %s: %v\n", a.Name, cmd.Name, ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(env.Stderr, "%s %s: %v\n", a.Name, cmd.Name, err)
	return 1
}

// FlagSet returns a flag set that reports errors instead of exiting, writes
// help to env.Stdout and whose Parse result should go through ParseFlags.
// Notes, when given, follow the flags in the help (e.g. the environment
// variables the command reads).
func FlagSet(env *Env, app, name, synopsis string, notes ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(app+" "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	printUsage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: %s %s %s\n\nFlags:\n", app, name, synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			fmt.Fprintln(w, "  (none)")
		}
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		for _, n := range notes {
			fmt.Fprintf(w, "\n%s", n)
		}
	}
	// The flag package calls Usage itself on -help and on every parse
	// error; ParseFlags decides what to print, so that call does nothing.
	fs.Usage = func() {}
	helpPrinters.Store(fs, func() { printUsage(env.Stdout) })
	return fs
}

// helpPrinters lets ParseFlags print a flag set's help once, to env.Stdout.
var helpPrinters sync.Map // *flag.FlagSet → func()

// ParseFlags parses args and turns flag errors into usage errors (Main
// prints the error and a one-line hint). --help prints the flags once and
// returns flag.ErrHelp (exit 0). Positional arguments are refused unless
// allowArgs.
func ParseFlags(fs *flag.FlagSet, args []string, allowArgs bool) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if p, ok := helpPrinters.Load(fs); ok {
				p.(func())()
			}
			return flag.ErrHelp
		}
		return &UsageError{Msg: err.Error()}
	}
	if !allowArgs && fs.NArg() > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", strings.Join(fs.Args(), " "))}
	}
	return nil
}
