package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

// Input limits. Bodies and titles: contract.AgentBodyChars and
// contract.AgentTitleChars.
const (
	MaxLabels      = 10
	MaxLabelChars  = 50
	MaxReasonChars = 2000
)

// ArgError is a tool call whose arguments the gate cannot accept.
type ArgError struct {
	Tool string
	Msg  string
}

func (e *ArgError) Error() string { return fmt.Sprintf("invalid %s call: %s", e.Tool, e.Msg) }

// args reads a tool's JSON arguments strictly: an object, only known keys,
// each of the right type.
type args struct {
	tool string
	m    map[string]json.RawMessage
}

func parseArgs(tool string, raw json.RawMessage, known ...string) (*args, error) {
	a := &args{tool: tool, m: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(raw)) == 0 {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a.m); err != nil || a.m == nil {
		return nil, a.errf("the arguments must be a JSON object with %s", strings.Join(known, ", "))
	}
	var unknown []string
	for k := range a.m {
		if !contains(known, k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, a.errf("unknown argument %s; %s takes %s", strings.Join(unknown, ", "), tool, strings.Join(known, ", "))
	}
	return a, nil
}

func (a *args) errf(format string, v ...any) error {
	return &ArgError{Tool: a.tool, Msg: fmt.Sprintf(format, v...)}
}

func (a *args) has(name string) bool {
	v, ok := a.m[name]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// text reads a required string: not blank, at most max characters,
// single-line when oneLine.
func (a *args) text(name string, max int, oneLine bool) (string, error) {
	if !a.has(name) {
		return "", a.errf("%q is required", name)
	}
	var s string
	if err := json.Unmarshal(a.m[name], &s); err != nil {
		return "", a.errf("%q must be a string", name)
	}
	if strings.TrimSpace(s) == "" {
		return "", a.errf("%q must not be empty", name)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", a.errf("%q is %d characters; the limit is %d", name, n, max)
	}
	if oneLine && strings.ContainsAny(s, "\r\n") {
		return "", a.errf("%q must be a single line", name)
	}
	return s, nil
}

// optText reads an optional string ("" when absent).
func (a *args) optText(name string, max int) (string, error) {
	if !a.has(name) {
		return "", nil
	}
	return a.text(name, max, true)
}

func (a *args) repo(valid func(string) bool) (string, error) {
	s, err := a.text("repo", 140, true)
	if err != nil {
		return "", err
	}
	if !valid(s) {
		return "", a.errf(`"repo" must be a GitHub repository as owner/name (e.g. octo-org/hello-world), got %q`, s)
	}
	return s, nil
}

// titled reads what every new issue and pull request has: the repo, a
// one-line title and a body.
func (a *args) titled() (repo, title, body string, err error) {
	if repo, err = a.repo(policy.ValidRepo); err != nil {
		return "", "", "", err
	}
	if title, err = a.text("title", contract.AgentTitleChars, true); err != nil {
		return "", "", "", err
	}
	if body, err = a.text("body", contract.AgentBodyChars, false); err != nil {
		return "", "", "", err
	}
	return repo, title, body, nil
}

// thread reads the "repo" and "number" arguments that name an issue or
// pull request.
func (a *args) thread() (string, int, error) {
	repo, err := a.repo(policy.ValidRepo)
	if err != nil {
		return "", 0, err
	}
	n, err := a.number("number")
	return repo, n, err
}

// number reads a positive issue/PR number; "12" is accepted as 12, since
// models sometimes quote numbers, but nothing else is coerced.
func (a *args) number(name string) (int, error) {
	if !a.has(name) {
		return 0, a.errf("%q is required: the issue or pull request number", name)
	}
	raw := bytes.TrimSpace(a.m[name])
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = []byte(strings.TrimPrefix(strings.TrimSpace(s), "#"))
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil || n <= 0 {
		return 0, a.errf("%q must be a positive whole number, got %s", name, clip(string(a.m[name]), 40))
	}
	return int(n), nil
}

func (a *args) boolean(name string) (bool, error) {
	if !a.has(name) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(a.m[name], &b); err != nil {
		return false, a.errf("%q must be true or false", name)
	}
	return b, nil
}

func (a *args) labels() ([]string, error) {
	if !a.has("labels") {
		return nil, nil
	}
	var ls []string
	if err := json.Unmarshal(a.m["labels"], &ls); err != nil {
		return nil, a.errf(`"labels" must be a list of strings`)
	}
	if len(ls) > MaxLabels {
		return nil, a.errf(`"labels" has %d entries; at most %d`, len(ls), MaxLabels)
	}
	for _, l := range ls {
		if strings.TrimSpace(l) == "" || utf8.RuneCountInString(l) > MaxLabelChars || strings.ContainsAny(l, "\r\n") {
			return nil, a.errf(`each label must be a non-empty single line of at most %d characters, got %q`, MaxLabelChars, clip(l, 60))
		}
	}
	return ls, nil
}

// reviewComments reads a review's inline comments strictly: each an
// object with path, line and body, optional start_line and side. Where
// they may go is outputs.CheckFacts's to say, with the diff.
func (a *args) reviewComments() ([]outputs.ReviewComment, error) {
	if !a.has("comments") {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(a.m["comments"], &raws); err != nil {
		return nil, a.errf(`"comments" must be a list of {path, line, body} objects`)
	}
	if len(raws) > contract.AgentReviewCommentsMax {
		return nil, a.errf(`"comments" has %d entries; a review may have at most %d (and this run's review-comment-limit may be lower)`, len(raws), contract.AgentReviewCommentsMax)
	}
	out := make([]outputs.ReviewComment, 0, len(raws))
	for i, raw := range raws {
		c, err := parseArgs(a.tool, raw, "path", "line", "start_line", "side", "body")
		if err != nil {
			return nil, a.errf("comment %d: %s", i+1, err.(*ArgError).Msg)
		}
		path, err := c.text("path", contract.AgentPathChars, true)
		if err != nil {
			return nil, a.errf("comment %d: %s", i+1, err.(*ArgError).Msg)
		}
		line, err := c.number("line")
		if err != nil {
			return nil, a.errf("comment %d: %s", i+1, err.(*ArgError).Msg)
		}
		start := 0
		if c.has("start_line") {
			if start, err = c.number("start_line"); err != nil {
				return nil, a.errf("comment %d: %s", i+1, err.(*ArgError).Msg)
			}
		}
		side, err := c.optText("side", 10)
		if err != nil {
			return nil, a.errf("comment %d: %s", i+1, err.(*ArgError).Msg)
		}
		side = strings.ToUpper(side)
		if side != "" && side != "RIGHT" && side != "LEFT" {
			return nil, a.errf(`comment %d: "side" must be RIGHT or LEFT, got %q`, i+1, clip(side, 20))
		}
		body, err := c.text("body", contract.AgentBodyChars, false)
		if err != nil {
			return nil, a.errf("comment %d: %s", i+1, err.(*ArgError).Msg)
		}
		out = append(out, outputs.ReviewComment{Path: path, Line: line, StartLine: start, Side: side, Body: body})
	}
	return out, nil
}

// validBranch accepts what git check-ref-format --branch would, minus
// anything exotic: no spaces, control characters, "..", "@{", ~^:?*[\,
// leading "-" or "/", trailing "/", "." or ".lock".
func validBranch(s string) bool {
	if s == "" || len(s) > 255 || s[0] == '-' || s[0] == '/' || strings.HasSuffix(s, "/") ||
		strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") || s == "@" ||
		strings.Contains(s, "..") || strings.Contains(s, "@{") || strings.Contains(s, "//") || strings.Contains(s, "/.") || s[0] == '.' {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
