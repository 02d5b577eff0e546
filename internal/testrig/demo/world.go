package demo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// Names of the demo world. Tokens have GitHub's shapes so the runner's
// token screening sees what it would see on GitHub.
const (
	BotLogin     = "mention-bot"
	ActionsLogin = "github-actions[bot]" // who the control repo's GITHUB_TOKEN writes as
	Author       = "alice"               // the allowed user who mentions the bot
	Org          = "acme"
	ControlRepo  = "acme/control"
	TargetRepo   = "acme/widgets"

	BotToken     = "ghp_demoBotToken000000000000000000000001"
	ControlToken = "ghs_demoControlToken0000000000000000002"
	bobToken     = "ghp_demoBobToken000000000000000000000003"

	// PRBranch, PROnlyFile and PROnlyContent: with SeedOptions.PR the thread
	// is a pull request from PRBranch, whose head adds PROnlyFile — a file
	// the default branch does not have.
	PRBranch      = "fix-crlf"
	PROnlyFile    = "PR_ONLY.md"
	PROnlyContent = "This file exists only on the pull request's head (" + PRBranch + ").\n"
	ForkRepo      = "bob/widgets"  // SeedOptions.Fork: where the pull request's head branch lives
	MainOnlyFile  = "CHANGELOG.md" // SeedOptions.Fork: committed on main after the fork branched off
)

// DefaultTask follows the !cfg line of the default comment.
const DefaultTask = "Please explain why the build fails on Windows, and open a tracking issue for the CRLF problem."

// DefaultComment is the trigger comment when none is given.
var DefaultComment = "@" + BotLogin + " !cfg here-only comment-limit=2\n" + DefaultTask

// World is the seeded simulator.
type World struct {
	Sim     *githubsim.Sim
	BaseURL string // "http://127.0.0.1:port/"
	Issue   int    // the target thread in TargetRepo
	// TriggerID is the comment that mentions the bot.
	TriggerID  int64
	TriggerURL string
	Padding    int // comments added before the trigger to make the context shard
}

// ServerURL is the web base without the trailing slash, as GITHUB_SERVER_URL.
func (w *World) ServerURL() string { return strings.TrimSuffix(w.BaseURL, "/") }

// ThreadURL is the target thread's web address.
func (w *World) ThreadURL() string {
	return fmt.Sprintf("%s%s/issues/%d", w.BaseURL, TargetRepo, w.Issue)
}

// PRHeadFunc commits onto branch of owner/name through gh (SeedOptions.PRHead).
type PRHeadFunc func(ctx context.Context, gh *github.Client, owner, name, branch string) error

// SeedOptions shape the world.
type SeedOptions struct {
	Comment string // trigger comment; "" = DefaultComment
	// Shard pads the thread (long issue body, many comments) so the context
	// no longer fits one 64,000-byte dispatch.
	Shard bool
	// PR makes the thread a pull request (head PRBranch, with PROnlyFile)
	// instead of an issue.
	PR bool
	// Fork (with PR) puts the pull request's head branch in bob's fork
	// (ForkRepo) instead of the target, and moves main on after the fork
	// branched off (MainOnlyFile).
	Fork bool
	// PRHead (with PR) commits more onto the pull request's head branch
	// (PRBranch in owner/name, as its author, through gh) after PROnlyFile
	// and before the pull request is opened, so the recorded head carries
	// it. Tests put a hostile tree there.
	PRHead PRHeadFunc
	// Private makes the target repository private (the bot can read it).
	Private bool
	// Labels are created in the target repository; ThreadLabels (some of
	// them) are put on the thread, before the trigger comment.
	Labels, ThreadLabels []string
	// BotPermission is the bot's role on the target ("" = none beyond
	// reading a public repository); labelling needs "triage".
	BotPermission string
	Logf          func(string, ...any)
}

// Seed starts a simulator on loopback and creates the demo world: the bot
// and its token, the org with a control repo and a target repo, an issue
// and the comment that mentions the bot. Close the returned world's Sim.
func Seed(o SeedOptions) (*World, error) {
	sim, err := githubsim.New(githubsim.Options{Logf: o.Logf})
	if err != nil {
		return nil, err
	}
	base, err := sim.Start()
	if err != nil {
		sim.Close()
		return nil, err
	}
	w := &World{Sim: sim, BaseURL: base}
	if err := w.seed(o); err != nil {
		sim.Close()
		return nil, fmt.Errorf("seed the simulator: %w", err)
	}
	return w, nil
}

func (w *World) seed(o SeedOptions) error {
	s := w.Sim
	s.AddUser(BotLogin)
	s.AddToken(BotToken, BotLogin)
	s.AddUser(ActionsLogin)
	s.AddToken(ControlToken, ActionsLogin)
	s.AddOrg(Org, "operator")
	for _, u := range []string{Author, "bob", "dana"} {
		s.AddUser(u)
	}
	if _, err := s.AddRepo(ControlRepo, true); err != nil {
		return err
	}
	if _, err := s.AddRepo(TargetRepo, o.Private); err != nil {
		return err
	}
	if o.Private {
		s.SetPermission(TargetRepo, BotLogin, "read")
		s.SetPermission(TargetRepo, "bob", "read")
		s.SetPermission(TargetRepo, "dana", "read")
	}
	// The bot dispatches to and writes in CONTROL; GITHUB_TOKEN is the
	// control repo's own workflow token.
	s.SetPermission(ControlRepo, BotLogin, "write")
	s.SetPermission(ControlRepo, ActionsLogin, "write")
	s.SetPermission(TargetRepo, Author, "write")

	body := "Building on Windows fails at the lint step: every file reports a trailing `\\r`.\n\nSteps: clone on Windows with default git settings, run `make`."
	if o.Shard {
		body += "\n\n" + padding("Full build log", 20000)
	}
	var n int
	var err error
	if o.PR {
		n, err = w.seedPR(body, o.Fork, o.PRHead)
	} else {
		n, err = s.CreateIssue(TargetRepo, "bob", "Build fails on Windows", body)
	}
	if err != nil {
		return err
	}
	w.Issue = n
	if o.BotPermission != "" {
		s.SetPermission(TargetRepo, BotLogin, o.BotPermission)
	}
	for _, l := range o.Labels {
		if err := s.CreateLabel(TargetRepo, l, ""); err != nil {
			return err
		}
	}
	s.AddIssueLabels(TargetRepo, n, o.ThreadLabels...)
	if o.Shard {
		// ~150 KB of discussion: more than two dispatches' worth of base64.
		for i := 1; i <= 60; i++ {
			who := []string{"bob", "dana"}[i%2]
			if _, err := s.Comment(TargetRepo, n, who, fmt.Sprintf("Attempt %d:\n\n%s", i, padding(fmt.Sprintf("log of attempt %d", i), 2500))); err != nil {
				return err
			}
			w.Padding++
		}
	} else if _, err := s.Comment(TargetRepo, n, "dana", "Same here on Windows 11; on Linux it builds fine."); err != nil {
		return err
	}
	comment := o.Comment
	if strings.TrimSpace(comment) == "" {
		comment = DefaultComment
	}
	c, err := s.Comment(TargetRepo, n, Author, comment)
	if err != nil {
		return err
	}
	w.TriggerID, w.TriggerURL = c.GetID(), c.GetHTMLURL()
	return nil
}

// padding is about size bytes of plausible build-log lines.
func padding(title string, size int) string {
	var b strings.Builder
	b.WriteString("```\n" + title + "\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "lint: src/widget_%03d.go:%d: trailing \\r at end of line (CRLF line endings)\n", i%500, 10+i%90)
	}
	b.WriteString("```")
	return b.String()
}

// seedPR pushes PRBranch with PROnlyFile (as bob, through the API) and
// opens a pull request from it; with fork, PRBranch is in bob's fork and
// main moves on afterwards.
func (w *World) seedPR(body string, fork bool, head PRHeadFunc) (int, error) {
	s := w.Sim
	s.SetPermission(TargetRepo, "bob", "write")
	s.AddToken(bobToken, "bob")
	gh := s.Client(bobToken)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	owner, name, _ := strings.Cut(TargetRepo, "/")
	headOwner := owner
	if fork {
		var accepted *github.AcceptedError
		if _, _, err := gh.Repositories.CreateFork(ctx, owner, name, &github.RepositoryCreateForkOptions{}); err != nil && !errors.As(err, &accepted) {
			return 0, fmt.Errorf("fork %s: %w", TargetRepo, err)
		}
		headOwner, _, _ = strings.Cut(ForkRepo, "/")
	}
	main, _, err := gh.Git.GetRef(ctx, headOwner, name, "heads/main")
	if err != nil {
		return 0, fmt.Errorf("read main: %w", err)
	}
	if _, _, err := gh.Git.CreateRef(ctx, headOwner, name, &github.Reference{Ref: github.String("refs/heads/" + PRBranch), Object: main.Object}); err != nil {
		return 0, fmt.Errorf("create %s: %w", PRBranch, err)
	}
	if _, _, err := gh.Repositories.CreateFile(ctx, headOwner, name, PROnlyFile, &github.RepositoryContentFileOptions{
		Message: github.String("Add " + PROnlyFile), Content: []byte(PROnlyContent), Branch: github.String(PRBranch),
	}); err != nil {
		return 0, fmt.Errorf("commit %s: %w", PROnlyFile, err)
	}
	if head != nil {
		if err := head(ctx, gh, headOwner, name, PRBranch); err != nil {
			return 0, fmt.Errorf("the pull request's head: %w", err)
		}
	}
	if !fork {
		return s.CreatePR(TargetRepo, "bob", "Normalize line endings", body, PRBranch, "main", "")
	}
	if _, _, err := gh.Repositories.CreateFile(ctx, owner, name, MainOnlyFile, &github.RepositoryContentFileOptions{
		Message: github.String("Add " + MainOnlyFile), Content: []byte("# Changes\n"), Branch: github.String("main"),
	}); err != nil {
		return 0, fmt.Errorf("commit %s: %w", MainOnlyFile, err)
	}
	pr, _, err := gh.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{
		Title: github.String("Normalize line endings"), Body: github.String(body),
		Head: github.String(headOwner + ":" + PRBranch), Base: github.String("main"),
	})
	if err != nil {
		return 0, fmt.Errorf("open the pull request from %s: %w", ForkRepo, err)
	}
	return pr.GetNumber(), nil
}

// runMovingBranch is Run with bob pushing a commit to PRBranch after the
// agent job and before publish: the branch moves under a queued push.
func (f *Flow) runMovingBranch(ctx context.Context) error {
	if err := f.Dispatch(ctx); err != nil {
		return err
	}
	if err := f.AssembleAll(ctx); err != nil {
		return err
	}
	agentErr := f.RunAgent(ctx)
	gh := f.w.Sim.Client(bobToken)
	owner, name, _ := strings.Cut(TargetRepo, "/")
	if _, _, err := gh.Repositories.CreateFile(ctx, owner, name, "BOB.md", &github.RepositoryContentFileOptions{
		Message: github.String("bob's change"), Content: []byte("bob was here\n"), Branch: github.String(PRBranch),
	}); err != nil {
		return errors.Join(agentErr, fmt.Errorf("move %s: %w", PRBranch, err))
	}
	if _, err := f.Publish(ctx); err != nil {
		return errors.Join(agentErr, err)
	}
	return agentErr
}

// botCommits counts the bot's commits on PRBranch (the last ten).
func (w *World) botCommits() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	owner, name, _ := strings.Cut(TargetRepo, "/")
	gh := w.Sim.Client(bobToken)
	ref, _, err := gh.Git.GetRef(ctx, owner, name, "heads/"+PRBranch)
	if err != nil {
		return 0, err
	}
	n, sha := 0, ref.GetObject().GetSHA()
	for range 10 {
		c, _, err := gh.Git.GetCommit(ctx, owner, name, sha)
		if err != nil {
			return n, err
		}
		if strings.EqualFold(c.GetAuthor().GetEmail(), BotLogin+"@users.noreply.github.com") {
			n++
		}
		if len(c.Parents) == 0 {
			break
		}
		sha = c.Parents[0].GetSHA()
	}
	return n, nil
}
