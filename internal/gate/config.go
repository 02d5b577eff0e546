package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mention-runner/mention-runner/internal/blocklist"
	"github.com/mention-runner/mention-runner/internal/policy"
)

// Config is the gate's configuration file, written by `runner agent` before
// it starts the engine. It is decoded strictly: an unknown or misspelt key
// stops the gate instead of being ignored.
type Config struct {
	RunDir string       `json:"run_dir"` // outputs.jsonl, logs/gate.jsonl and PR bundles go here
	Bot    string       `json:"bot"`
	Here   Thread       `json:"here"` // the triggering issue/PR
	Policy PolicyConfig `json:"policy"`
	// Blocklist is the opt-out patterns ("owner/*", "owner/name") as read
	// when the run started.
	Blocklist            []string `json:"blocklist"`
	WorkDir              string   `json:"workdir"` // the target checkout; "" = no pull requests
	AllowWorkflowChanges bool     `json:"allow_workflow_changes"`
	MaxBundleBytes       int64    `json:"max_bundle_bytes"` // 0 = prbundle.DefaultMaxBytes
	JobID                string   `json:"jobid"`
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
}

// Thread names an issue or pull request.
type Thread struct {
	Repo   string `json:"repo"`
	Number int    `json:"number"`
}

// PolicyConfig is the effective policy (policy.Policy's JSON fields) plus
// the operator's ceilings, which the gate applies again so a policy that
// was built wrong can still never exceed them.
type PolicyConfig struct {
	policy.Policy
	Ceilings *Ceilings `json:"ceilings,omitempty"`
}

// Ceilings mirrors policy.Ceilings with JSON names.
type Ceilings struct {
	CommentLimit int `json:"comment_limit"`
	IssueLimit   int `json:"issue_limit"`
	PRLimit      int `json:"pr_limit"`
	MaxWrites    int `json:"max_writes"`
}

// NewPolicyConfig packs an effective policy and its ceilings for the file.
// Here and Blocker are not serialised; the file carries them as here and
// blocklist.
func NewPolicyConfig(p policy.Policy, c policy.Ceilings) PolicyConfig {
	p.Here, p.Blocker = policy.Thread{}, nil
	return PolicyConfig{Policy: p, Ceilings: &Ceilings{CommentLimit: c.CommentLimit, IssueLimit: c.IssueLimit, PRLimit: c.PRLimit, MaxWrites: c.MaxWrites}}
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
	p := c.Policy.Policy
	for name, v := range map[string]int{"comment_limit": p.CommentLimit, "issue_limit": p.IssueLimit, "pr_limit": p.PRLimit} {
		if v < 0 || v > policy.MaxLimit {
			bad("policy.%s=%d is outside 0…%d", name, v, policy.MaxLimit)
		}
	}
	if ce := c.Policy.Ceilings; ce != nil {
		if err := (policy.Ceilings{CommentLimit: ce.CommentLimit, IssueLimit: ce.IssueLimit, PRLimit: ce.PRLimit, MaxWrites: ce.MaxWrites}).Validate(); err != nil {
			bad("policy.ceilings: %v", err)
		}
	}
	for _, r := range append(append([]string{}, p.AllowRepos...), p.DenyRepos...) {
		if !policy.ValidRepo(r) {
			bad("policy repo %q is not owner/name", r)
		}
	}
	for _, b := range c.Blocklist {
		if owner, name, ok := strings.Cut(b, "/"); !ok || owner == "" || name == "" {
			bad("blocklist pattern %q is not owner/name or owner/*", b)
		}
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

// effective rebuilds the policy the gate enforces: the file's policy,
// tightened by the ceilings and by its own implications (here-only ⇒
// comment-only ⇒ no issues or PRs), with here and the blocklist attached.
func (c Config) effective() policy.Policy {
	p := c.Policy.Policy
	if ce := c.Policy.Ceilings; ce != nil {
		p.CommentLimit = min(p.CommentLimit, ce.CommentLimit)
		p.IssueLimit = min(p.IssueLimit, ce.IssueLimit)
		p.PRLimit = min(p.PRLimit, ce.PRLimit)
		p.MaxWrites = min(p.MaxWrites, ce.MaxWrites)
	}
	if p.HereOnly {
		p.CommentOnly = true
	}
	if p.CommentOnly {
		p.IssueLimit, p.PRLimit = 0, 0
	}
	p.Here = policy.Thread{Repo: c.Here.Repo, Number: c.Here.Number}
	list := &blocklist.List{}
	for _, pat := range c.Blocklist {
		list.Entries = append(list.Entries, blocklist.Entry{Pattern: pat})
	}
	p.Blocker = list
	return p
}
