package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
)

func TestExplain(t *testing.T) {
	cases := []struct {
		name, body string
		args       []string
		code       int
		check      func(t *testing.T, out map[string]any)
	}{
		{"spec example 1", "@bot !cfg comment-only here-only\nsummarise", nil, 0, func(t *testing.T, out map[string]any) {
			p := out["policy"].(map[string]any)
			assert.Equal(t, true, p["here_only"])
			assert.Equal(t, true, p["comment_only"])
			assert.Equal(t, float64(0), p["issue_limit"])
			assert.Equal(t, []any{}, p["allow_repos"])
			assert.Nil(t, out["error"])
		}},
		{"spec example 2", "@bot !cfg repo=foo/bar pr-limit=0", nil, 0, func(t *testing.T, out map[string]any) {
			p := out["policy"].(map[string]any)
			assert.Equal(t, []any{"foo/bar"}, p["allow_repos"])
			assert.Equal(t, float64(0), p["pr_limit"])
			assert.Equal(t, float64(3), p["comment_limit"])
			m := out["mentions"].([]any)[0].(map[string]any)
			assert.Equal(t, "task", m["command"])
			assert.Equal(t, []any{"repo=foo/bar", "pr-limit=0"}, m["flags"])
			assert.Equal(t, float64(1), m["line"])
		}},
		{"operator ceiling", "@bot !cfg comment-limit=9", []string{"--comment-limit", "2"}, 0, func(t *testing.T, out map[string]any) {
			assert.Equal(t, float64(2), out["policy"].(map[string]any)["comment_limit"])
		}},
		{"new kinds in the effective policy", "@bot !cfg comment-only\nreview it", []string{"--label-limit", "2", "--allow-push"}, 0, func(t *testing.T, out map[string]any) {
			p := out["policy"].(map[string]any)
			assert.Equal(t, float64(0), p["label_limit"], "comment-only: no labels")
			assert.Equal(t, float64(30), p["review_comment_limit"])
			assert.Equal(t, true, p["allow_push"])
			verdict := map[string]map[string]any{}
			for _, v := range out["tools"].([]any) {
				verdict[v.(map[string]any)["tool"].(string)] = v.(map[string]any)
			}
			assert.Equal(t, true, verdict["create_review"]["allowed"])
			assert.Equal(t, false, verdict["add_labels"]["allowed"])
			assert.Contains(t, verdict["add_labels"]["why"], "comment-only")
			assert.Equal(t, false, verdict["remove_labels"]["allowed"])
		}},
		{"go away", "thanks\n@bot go away", nil, 0, func(t *testing.T, out map[string]any) {
			m := out["mentions"].([]any)[0].(map[string]any)
			assert.Equal(t, "go_away", m["command"])
			assert.Equal(t, float64(2), m["line"])
		}},
		{"no mention", "`@bot` in code", nil, 0, func(t *testing.T, out map[string]any) {
			assert.Equal(t, []any{}, out["mentions"])
		}},
		{"invalid cfg", "@bot !cfg comment-onyl", nil, 2, func(t *testing.T, out map[string]any) {
			assert.NotContains(t, out, "policy")
			assert.Contains(t, out["error"], "comment-onyl")
			assert.Contains(t, out["error"], "here-only")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader(c.body), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			code := app.Main(context.Background(), env, append([]string{"explain", "--bot", "bot"}, c.args...))
			require.Equal(t, c.code, code, stderr.String())
			var out map[string]any
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
			c.check(t, out)
		})
	}
}

// TestExplainCeilingsFromEnv: explain reads the dispatcher's ceiling
// settings, so it shows the policy the dispatcher would report.
func TestExplainCeilingsFromEnv(t *testing.T) {
	cases := []struct {
		name string
		vars map[string]string
		args []string
		code int
		want map[string]float64
		err  string
	}{
		{"environment", map[string]string{"COMMENT_LIMIT": "1", "ISSUE_LIMIT": "0", "PR_LIMIT": "5"}, nil, 0,
			map[string]float64{"comment_limit": 1, "issue_limit": 0, "pr_limit": 5}, ""},
		{"flag beats environment", map[string]string{"COMMENT_LIMIT": "1"}, []string{"--comment-limit", "4"}, 0,
			map[string]float64{"comment_limit": 4, "issue_limit": 1, "pr_limit": 1}, ""},
		{"bad environment", map[string]string{"ISSUE_LIMIT": "many"}, nil, 2, nil, `ISSUE_LIMIT="many": want a whole number 0…1000`},
		{"bad flag ignores environment", map[string]string{"PR_LIMIT": "x"}, []string{"--pr-limit", "1001"}, 2, nil, "pr-limit=1001"},
		{"out of range environment", map[string]string{"COMMENT_LIMIT": "-2"}, nil, 2, nil, "comment-limit=-2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader("@bot do it"), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return c.vars[k] }}
			code := app.Main(context.Background(), env, append([]string{"explain", "--bot", "bot"}, c.args...))
			require.Equal(t, c.code, code, stderr.String())
			if c.err != "" {
				assert.Contains(t, stderr.String(), c.err)
				return
			}
			var out struct{ Policy map[string]any }
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
			for k, v := range c.want {
				assert.Equal(t, v, out.Policy[k], k)
			}
		})
	}
}

func TestExplainNeedsBot(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader("x"), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	assert.Equal(t, 2, app.Main(context.Background(), env, []string{"explain"}))
	assert.Contains(t, stderr.String(), "--bot is required")
}

// TestExplainStrayCfg: each way a written restriction could be dropped
// silently is an error naming the !cfg.
func TestExplainStrayCfg(t *testing.T) {
	for _, body := range []string{
		"@bot hi\n@bot !cfg here-only do X",
		"@bot please !cfg here-only",
		"@bot\n!cfg here-only",
		"(@bot) !cfg here-only",
		"@bot ！cfg here-only",
		"@bot ¡cfg here-only",
	} {
		t.Run(body, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader(body), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			require.Equal(t, 2, app.Main(context.Background(), env, []string{"explain", "--bot", "bot"}), stderr.String())
			var out map[string]any
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
			assert.NotContains(t, out, "policy")
			assert.Contains(t, out["error"], "cfg")
			assert.Contains(t, out["error"], "first mention")
		})
	}
}
