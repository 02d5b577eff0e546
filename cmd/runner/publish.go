package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/runner/config"
	"github.com/mention-runner/mention-runner/internal/runner/publish"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

// actionsBotLogin is who GITHUB_TOKEN writes as.
const actionsBotLogin = "github-actions[bot]"

func init() {
	app.Register(&cli.Command{
		Name:    "publish",
		Summary: "re-check the agent's writes, apply them with the bot token and write the run-log report",
		Run:     runPublish,
	})
}

func runPublish(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "runner", "publish", "[--run-id ID]", config.EnvHelp("publish"))
	runID := fs.String("run-id", env.Env("MR_RUN_ID"), "the agent's run directory under MR_RUN_DIR (default: the only one there; env MR_RUN_ID)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	cfg, err := config.Load(env.Env)
	if err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	token := strings.TrimSpace(env.Env("BOT_TOKEN"))
	if token == "" {
		return &cli.ExitError{Code: 2, Err: errors.New("BOT_TOKEN is required: publish is the job that writes with the bot's token")}
	}
	trusted, err := publish.VerifyContext(cfg.ContextFile, cfg.ContextSHA256)
	if err != nil {
		return err
	}
	runDir, reason := "", ""
	if dir, err := publish.FindRunDir(cfg.RunDir, *runID); err != nil {
		reason = err.Error()
	} else {
		runDir = dir
	}
	gap := cfg.WriteGap
	if gap == 0 {
		gap = -1 // the pacer reads 0 as "default"; the operator asked for none
	}
	pacer := ghclient.NewPacer(0, 0, gap, nil, nil)
	ua := "mention-runner/" + cli.Version
	ct := strings.TrimSpace(env.Env("GITHUB_TOKEN"))
	ledger, err := shareBudget(env, cfg, pacer, token, ct, ua, publish.PlannedWrites(runDir, ct == "" || ct == token))
	if err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	bot, err := ghclient.New(ghclient.Options{BaseURL: cfg.APIURL, Token: token, UserAgent: ua, Pacer: pacer, MaxWait: ghclient.AccountLimitWait})
	if err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	o := publish.Options{
		Bot: bot, BotLogin: cfg.BotLogin, ControlRepo: cfg.ControlRepo, LogIssue: cfg.LogIssue,
		LogIssueNew: cfg.LogIssueNew, Attempt: runAttempt(env), Unsharded: cfg.Unsharded, ControlIDs: cfg.ControlIDs,
		Context: trusted, RunDir: runDir, NoRecordReason: reason,
		AgentJob:      publish.AgentJob{Result: cfg.AgentResult, Stage: cfg.AgentStage},
		Ceilings:      cfg.Ceilings(),
		BlocklistPath: cfg.BlocklistPath,
		MaxDiffBytes:  cfg.MaxDiffBytes,
		Git: publish.GitOptions{
			BaseURL: cfg.ServerURL + "/", Token: token,
			AllowPushToTarget: cfg.AllowPushToTarget, AllowWorkflowChanges: cfg.AllowWorkflowChanges,
			MaxBundleBytes: int64(cfg.MaxBundleBytes),
		},
		ServerURL:      cfg.ServerURL,
		WorkflowRunURL: workflowRunURL(env, cfg.ServerURL),
		Engine:         cfg.Engine,
		Logf:           func(f string, a ...any) { fmt.Fprintf(env.Stderr, "publish: "+f+"\n", a...) },
	}
	// The control repo's own token, when the workflow passes it, keeps the
	// log issue and job refs out of the bot's hands.
	if ct != "" && ct != token {
		// the workflow's token is another account: its own pacer, not
		// the bot's budget
		ctlPacer := ghclient.NewPacer(0, 0, gap, nil, nil)
		if o.Control, err = ghclient.New(ghclient.Options{BaseURL: cfg.APIURL, Token: ct, UserAgent: ua, Pacer: ctlPacer, MaxWait: ghclient.AccountLimitWait}); err != nil {
			return &cli.ExitError{Code: 2, Err: err}
		}
		o.ControlLogin = actionsBotLogin
	}
	if o.ControlPush, err = controlPush(o, cfg, token, ct); err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	res, err := publish.Run(ctx, o)
	// Every file of runs/ is uploaded as the run-record artifact.
	if rerr := record.RedactDir(cfg.RunDir); rerr != nil {
		fmt.Fprintf(env.Stderr, "publish: %v\n", rerr)
	}
	// the slots this job took and did not use go back to the account
	if rerr := ledger.Release(ctx); rerr != nil {
		fmt.Fprintf(env.Stderr, "publish: giving back unused write slots: %v\n", rerr)
	}
	if res != nil && res.StepSummary != "" {
		if serr := appendStepSummary(env.Env("GITHUB_STEP_SUMMARY"), res.StepSummary); serr != nil {
			fmt.Fprintf(env.Stderr, "publish: %v\n", serr)
		}
	}
	if err != nil {
		return err
	}
	link := fmt.Sprintf("%s/%s/issues/%d", cfg.ServerURL, cfg.ControlRepo, res.LogIssue)
	fmt.Fprintf(env.Stdout, "job %s: %s; %d written, %d refused; run log %s\n",
		res.JobID, res.Status, len(res.Written), len(res.Refused), link)
	if res.Status != "completed" {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("the run failed (%s); see %s", res.Cause, link)}
	}
	return nil
}

// controlPush deletes the job's refs in one push, with the token and the
// client (timeouts, waits on GitHub's limits) that write CONTROL.
func controlPush(o publish.Options, cfg *config.Config, botToken, controlToken string) (*refpush.Client, error) {
	if o.Control == nil {
		return refpush.ForAPI(o.Bot, botToken)
	}
	return refpush.ForAPI(o.Control, controlToken)
}

// shareBudget makes the publish job's writes take slots of the bot
// account's ledger in the control repo, shared with the dispatcher and the
// other publish jobs running at the same time. The ledger is written with
// the workflow's token when there is one (not the bot's account, so it
// costs the bot nothing), else with the bot's; and with the bot's while
// the workflow's token is refused (every prepare job writes with it).
//
// block sizes its grants to the writes the job plans (publish.PlannedWrites):
// every slot taken is used, so none is given back at the end, which would
// cost a ledger update.
func shareBudget(env *cli.Env, cfg *config.Config, pacer *ghclient.Pacer, botToken, controlToken, ua string, block int) (*writebudget.Ledger, error) {
	mk := func(tok string) (*github.Client, error) {
		return ghclient.New(ghclient.Options{BaseURL: cfg.APIURL, Token: tok, UserAgent: ua, RetryUnsafe: true})
	}
	bc, err := mk(botToken)
	if err != nil {
		return nil, err
	}
	// each ledger update is one push of its commit and ref (one write), to
	// the server of the API the tokens are sent to (GITHUB_SERVER_URL
	// names that same server in Actions)
	bp, err := refpush.ForAPI(bc, botToken)
	if err != nil {
		return nil, err
	}
	lc, lp, self := bc, bp, writebudget.UpdateCost(bp)
	fallback, fallbackPush := (*github.Client)(nil), (*refpush.Client)(nil)
	if controlToken != "" && controlToken != botToken {
		if lc, err = mk(controlToken); err != nil {
			return nil, err
		}
		if lp, err = refpush.ForAPI(lc, controlToken); err != nil {
			return nil, err
		}
		self, fallback, fallbackPush = 0, bc, bp
	}
	ledger, err := writebudget.New(writebudget.Options{Client: lc, Push: lp, Repo: cfg.ControlRepo, Account: cfg.BotLogin,
		Holder: "publish-" + env.Env("GITHUB_RUN_ID") + "-" + env.Env("GITHUB_RUN_ATTEMPT"), SelfCost: self, Block: block,
		Fallback: fallback, FallbackPush: fallbackPush, FallbackCost: writebudget.UpdateCost(fallbackPush),
		Warn: func(err error) { fmt.Fprintf(env.Stderr, "publish: account write budget unavailable: %v\n", err) }})
	if err != nil {
		return nil, err
	}
	pacer.Share(ledger)
	return ledger, nil
}

// runAttempt is GITHUB_RUN_ATTEMPT, 0 when it is not a positive number
// (publish then reads as on a re-run).
func runAttempt(env *cli.Env) int {
	n, err := strconv.Atoi(strings.TrimSpace(env.Env("GITHUB_RUN_ATTEMPT")))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

func workflowRunURL(env *cli.Env, server string) string {
	return contract.WorkflowRunURL(server, env.Env("GITHUB_REPOSITORY"), env.Env("GITHUB_RUN_ID"))
}

func appendStepSummary(path, text string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("step summary: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("step summary: %w", err)
	}
	return f.Close()
}
