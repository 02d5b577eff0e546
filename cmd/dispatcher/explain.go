package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/mention"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

func init() {
	app.Register(&cli.Command{
		Name:    "explain",
		Summary: "show how a comment body (stdin) is read: mentions, commands, effective policy",
		Run:     runExplain,
	})
}

// ceilingsFromEnv fills the ceilings not given as flags from the
// environment the dispatcher reads, so explain shows the policy it would.
func ceilingsFromEnv(env *cli.Env, fs *flag.FlagSet, ceil *policy.Ceilings) error {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	targets := []*int{&ceil.CommentLimit, &ceil.IssueLimit, &ceil.PRLimit}
	var errs []string
	for i, k := range ceilingKeys {
		if given[flagOf(k)] || !isSet(env, k) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(env.Env(k)))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q: want a whole number 0…%d", k, env.Env(k), policy.MaxLimit))
			continue
		}
		*targets[i] = n
	}
	if len(errs) > 0 {
		return cli.Usagef("%s", strings.Join(errs, "; "))
	}
	return nil
}

type explainMention struct {
	Command string   `json:"command"`
	Flags   []string `json:"flags"`
	Line    int      `json:"line"`
}

type explainOut struct {
	Mentions []explainMention `json:"mentions"`
	Policy   *policy.Policy   `json:"policy,omitempty"`
	// Tools is the policy's verdict on each gate tool (on a pull request
	// thread; an issue thread has no review or push).
	Tools []policy.ToolVerdict `json:"tools,omitempty"`
	Error *string              `json:"error"`
}

func runExplain(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "dispatcher", "explain", "--bot LOGIN [--comment-limit N --issue-limit N --pr-limit N] < comment.md")
	bot := fs.String("bot", env.Env("BOT_LOGIN"), "the bot's login (default $BOT_LOGIN)")
	ceil := policy.DefaultCeilings()
	fs.IntVar(&ceil.CommentLimit, "comment-limit", ceil.CommentLimit, "operator ceiling: comments per issue/PR (env COMMENT_LIMIT)")
	fs.IntVar(&ceil.IssueLimit, "issue-limit", ceil.IssueLimit, "operator ceiling: issues per run (env ISSUE_LIMIT)")
	fs.IntVar(&ceil.PRLimit, "pr-limit", ceil.PRLimit, "operator ceiling: pull requests per run (env PR_LIMIT)")
	fs.IntVar(&ceil.LabelLimit, "label-limit", ceil.LabelLimit, "operator ceiling: label changes per run (the runner's label-limit)")
	fs.IntVar(&ceil.ReviewComments, "review-comment-limit", ceil.ReviewComments, "operator ceiling: inline comments per review (the runner's review-comment-limit)")
	fs.BoolVar(&ceil.AllowPush, "allow-push", ceil.AllowPush, "the operator lets push_to_pull_request push (the runner's allow-push)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	if err := ceilingsFromEnv(env, fs, &ceil); err != nil {
		return err
	}
	login := strings.TrimPrefix(strings.TrimSpace(*bot), "@")
	if login == "" {
		return cli.Usagef("--bot is required (or set BOT_LOGIN)")
	}
	if err := ceil.Validate(); err != nil {
		return cli.Usagef("%v", err)
	}
	body, err := io.ReadAll(env.Stdin)
	if err != nil {
		return fmt.Errorf("read comment from stdin: %w", err)
	}
	out := explainOut{Mentions: []explainMention{}}
	ms := mention.Find(string(body), login)
	for _, m := range ms {
		flags := m.Flags
		if flags == nil {
			flags = []string{}
		}
		out.Mentions = append(out.Mentions, explainMention{Command: string(m.Command), Flags: flags, Line: m.Line})
	}
	// The first mention decides, as in the dispatcher and the runner.
	_, _, f, flagErr := policy.FromComment(string(body), login)
	if flagErr != nil {
		msg := flagErr.Error()
		out.Error = &msg
	} else {
		p := policy.Effective(f, ceil, policy.Thread{}, nil)
		out.Policy = &p
		out.Tools = p.Tools(true)
	}
	enc := json.NewEncoder(env.Stdout)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	if flagErr != nil {
		return &cli.ExitError{Code: 2}
	}
	return nil
}
