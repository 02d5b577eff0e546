package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/prdiff"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

// Config is the gate's configuration file, written by `runner agent` before
// it starts the engine. It is decoded strictly: an unknown or misspelt key
// stops the gate instead of being ignored.
type Config struct {
	RunDir string `json:"run_dir"` // outputs.jsonl, logs/gate.jsonl and PR bundles go here
	Bot    string `json:"bot"`
	Here   Thread `json:"here"` // the triggering issue/PR
	// Flags, Ceilings, Here and Blocklist are the raw inputs publish builds
	// its policy from; the gate builds its own with the same
	// policy.Effective, so the two can never disagree about a rule.
	// Flags is the trigger's !cfg flags in policy.Flags.String form ("" =
	// none); it is parsed with the same parser as the comment.
	Flags string `json:"flags"`
	// Ceilings are the operator's; required (a file without them is refused
	// rather than read as "no limits" or "no writes").
	Ceilings *policy.Ceilings `json:"ceilings"`
	// Blocklist is the opt-out snapshot as read when the run started (nil =
	// none was available; publish checks a fresh copy anyway).
	Blocklist *blocklist.List `json:"blocklist,omitempty"`
	// RepoIDs are the numeric ids of repositories, resolved from trusted
	// data (the thread's repository from the context; deny= entries by
	// assemble): the opt-out list and deny= match on them as well as on
	// names, as publish does with the ids it resolves itself.
	RepoIDs              policy.IDs `json:"repo_ids,omitempty"`
	WorkDir              string     `json:"workdir"` // the target checkout; "" = no pull requests
	AllowWorkflowChanges bool       `json:"allow_workflow_changes"`
	MaxBundleBytes       int64      `json:"max_bundle_bytes"` // 0 = prbundle.DefaultMaxBytes
	JobID                string     `json:"jobid"`
	// StartCommit is HEAD of WorkDir before the agent ran; it is the PR base
	// when origin/<base> does not exist in the checkout.
	StartCommit string `json:"start_commit,omitempty"`
	// CheckoutRepo, when set, is the owner/name WorkDir is a clone of; pull
	// requests may only target it (the commits exist nowhere else).
	CheckoutRepo string `json:"checkout_repo,omitempty"`
	// DefaultBase is the base branch when the agent names none.
	DefaultBase string `json:"default_base,omitempty"`
	// GitDir, when set, is WorkDir's git directory, kept outside the tree
	// so the agent cannot change it ("" = WorkDir/.git).
	GitDir string `json:"git_dir,omitempty"`
	// HereIsPR says the triggering thread is a pull request; DiffFile is
	// its diff at the recorded head as the fetch step wrote it ("" = none,
	// NoDiff says why): create_review's inline comments must lie in it.
	HereIsPR bool   `json:"here_is_pr,omitempty"`
	DiffFile string `json:"diff_file,omitempty"`
	NoDiff   string `json:"no_diff,omitempty"`
	// Labels are the label names of each repository whose labels the
	// trusted context lists (lower-case owner/name → names).
	Labels map[string][]string `json:"labels,omitempty"`
	// LabelsMissing says why a repository repo= names has no labels there.
	LabelsMissing map[string]string `json:"labels_missing,omitempty"`
	// NoTriage: the context says the bot lacks the triage role on the
	// thread's repository (label changes there would be refused).
	NoTriage bool `json:"no_triage,omitempty"`
}

// facts reads the run's trusted facts for outputs.CheckFacts.
func (c Config) facts() (outputs.Facts, error) {
	f := outputs.Facts{Here: policy.Thread{Repo: c.Here.Repo, Number: c.Here.Number}, IsPR: c.HereIsPR, NoDiff: c.NoDiff, Labels: c.Labels, LabelsMissing: c.LabelsMissing, NoTriage: c.NoTriage}
	if c.DiffFile != "" {
		b, err := os.ReadFile(c.DiffFile)
		if err != nil {
			return f, fmt.Errorf("gate: read the pull request's diff: %w", err)
		}
		f.Diff = prdiff.Parse(string(b))
	}
	return f, nil
}

// Thread names an issue or pull request.
type Thread struct {
	Repo   string `json:"repo"`
	Number int    `json:"number"`
}

// ConfigError is a config file the gate will not run with.
type ConfigError struct {
	Path string
	Err  error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("gate config %s: %v", e.Path, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads and validates a config file.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, &ConfigError{Path: path, Err: err}
	}
	c, err := ParseConfig(b)
	if err != nil {
		return Config{}, &ConfigError{Path: path, Err: err}
	}
	return c, nil
}

// ParseConfig decodes and validates config JSON.
func ParseConfig(b []byte) (Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return Config{}, errors.New("decode: trailing data after the config object")
	}
	return c, c.Validate()
}

// WriteFile writes c as JSON (0600: it names the run's paths and policy).
func (c Config) WriteFile(path string) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("gate config: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("gate config: encode: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("gate config: %w", err)
	}
	return nil
}

// Validate reports the first problem that would make the gate guess.
func (c Config) Validate() error {
	var problems []string
	bad := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
	if c.RunDir == "" {
		bad("run_dir is required")
	}
	if !policy.ValidRepo(c.Here.Repo) || c.Here.Number <= 0 {
		bad("here must name the triggering thread as {repo: owner/name, number: n>0}, got %q #%d", c.Here.Repo, c.Here.Number)
	}
	if _, err := c.flags(); err != nil {
		bad("flags %q: %v", c.Flags, err)
	}
	if c.Ceilings == nil {
		bad("ceilings are required")
	} else if err := c.Ceilings.Validate(); err != nil {
		bad("ceilings: %v", err)
	}
	if err := c.Blocklist.Validate(); err != nil {
		bad("blocklist: %v", err)
	}
	if c.MaxBundleBytes < 0 {
		bad("max_bundle_bytes must not be negative")
	}
	if c.CheckoutRepo != "" && !policy.ValidRepo(c.CheckoutRepo) {
		bad("checkout_repo %q is not owner/name", c.CheckoutRepo)
	}
	if c.DefaultBase != "" && !validBranch(c.DefaultBase) {
		bad("default_base %q is not a valid branch name", c.DefaultBase)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// flags parses Flags with the comment's own parser ("" = no flags).
func (c Config) flags() (policy.Flags, error) {
	if strings.TrimSpace(c.Flags) == "" {
		return policy.Flags{}, nil
	}
	return policy.ParseFlagLine(c.Flags)
}
