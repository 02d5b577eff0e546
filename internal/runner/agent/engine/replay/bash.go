package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Bash step limits, as Claude Code's Bash tool: a 2-minute default timeout
// and output cut at 30,000 characters.
const (
	bashTimeout   = 2 * time.Minute
	maxBashOutput = 30000
)

// deniedBash is Claude Code's answer in dontAsk mode to a Bash call the
// allowed tools do not cover (shortened).
const deniedBash = "Permission to use Bash has been denied because Claude Code is running in don't ask mode."

// bash runs a shell step in the work dir with the engine's environment,
// in its own process group so a stop kills everything it started.
func (r *run) bash(ctx context.Context, command string) (string, bool) {
	if !bashAllowed(r.spec.AllowedTools, command) {
		r.denials = append(r.denials, "Bash")
		return deniedBash, true
	}
	ctx, cancel := context.WithTimeout(ctx, bashTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = r.spec.WorkDir
	cmd.Env = nonNil(r.spec.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.TrimRight(out.String(), "\n")
	if len(text) > maxBashOutput {
		text = text[:maxBashOutput] + fmt.Sprintf("\n... [%d characters truncated]", len(text)-maxBashOutput)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return text, false
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Sprintf("Command timed out after %s\n%s", bashTimeout, text), true
	case errors.As(err, &exit):
		return strings.TrimRight(fmt.Sprintf("Exit code %d\n%s", exit.ExitCode(), text), "\n"), true
	default:
		return "Error: " + err.Error(), true
	}
}

// bashAllowed applies Claude Code's allowedTools rules for Bash: "Bash"
// allows any command, "Bash(cmd)" exactly cmd, "Bash(prefix:*)" any
// command starting with prefix.
func bashAllowed(allowed []string, command string) bool {
	command = strings.TrimSpace(command)
	for _, a := range allowed {
		a = strings.TrimSpace(a)
		if a == "Bash" {
			return true
		}
		inner, ok := strings.CutPrefix(a, "Bash(")
		if !ok || !strings.HasSuffix(inner, ")") {
			continue
		}
		inner = strings.TrimSuffix(inner, ")")
		if prefix, ok := strings.CutSuffix(inner, ":*"); ok {
			if command == prefix || strings.HasPrefix(command, prefix+" ") {
				return true
			}
		} else if command == inner {
			return true
		}
	}
	return false
}
