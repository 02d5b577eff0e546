package benchreport

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Pipe runs the commands as a shell pipeline (stdin from the file, the last
// one's output discarded) and returns the wall time until all have ended.
func Pipe(ctx context.Context, stdinFile string, cmds ...[]string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	in, err := os.Open(stdinFile)
	if err != nil {
		return 0, fmt.Errorf("pipe: %w", err)
	}
	defer in.Close()
	var procs []*exec.Cmd
	var stderrs []*strings.Builder
	for _, args := range cmds {
		c := exec.CommandContext(ctx, args[0], args[1:]...)
		var se strings.Builder
		c.Stderr = &se
		procs, stderrs = append(procs, c), append(stderrs, &se)
	}
	procs[0].Stdin = in
	for i := 0; i+1 < len(procs); i++ {
		r, err := procs[i].StdoutPipe()
		if err != nil {
			return 0, fmt.Errorf("pipe: %w", err)
		}
		procs[i+1].Stdin = r
	}
	start := time.Now()
	for _, c := range procs {
		if err := c.Start(); err != nil {
			return 0, fmt.Errorf("pipe: start %s: %w", c.Path, err)
		}
	}
	for i, c := range procs {
		if err := c.Wait(); err != nil {
			return 0, fmt.Errorf("pipe: %s: %w: %s", strings.Join(cmds[i], " "), err, strings.TrimSpace(stderrs[i].String()))
		}
	}
	return time.Since(start), nil
}

// ContextJSON builds a real-shaped context of about size bytes: a thread of
// issue comments in GitHub's JSON shape, as the dispatcher gathers it.
func ContextJSON(size int) []byte {
	type user struct {
		Login string `json:"login"`
		ID    int    `json:"id"`
		Type  string `json:"type"`
	}
	type comment struct {
		ID        int    `json:"id"`
		NodeID    string `json:"node_id"`
		HTMLURL   string `json:"html_url"`
		Body      string `json:"body"`
		User      user   `json:"user"`
		CreatedAt string `json:"created_at"`
	}
	body := strings.Repeat("The build fails on Windows because git checks the sources out with CRLF line endings; "+
		"see `ci.yml` line 42 and the \"core.autocrlf\" setting. ", 8)
	var comments []comment
	n := 0
	for i := 1; n < size; i++ {
		c := comment{ID: 1000 + i, NodeID: fmt.Sprintf("IC_kwDO%08d", i), HTMLURL: fmt.Sprintf("https://github.com/acme/widgets/issues/1#issuecomment-%d", 1000+i),
			Body: body, User: user{Login: "alice", ID: 7, Type: "User"}, CreatedAt: "2026-01-01T00:00:00Z"}
		comments = append(comments, c)
		n += len(body) + 250
	}
	b, _ := json.Marshal(map[string]any{
		"repository": map[string]any{"full_name": "acme/widgets", "default_branch": "main"},
		"issue":      map[string]any{"number": 1, "title": "CRLF", "body": body, "user": user{Login: "alice", ID: 7, Type: "User"}},
		"comments":   comments,
	})
	return b
}
