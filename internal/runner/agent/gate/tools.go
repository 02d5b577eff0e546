package gate

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

// DisplayName is a gate tool's friendly name, its MCP title, looked up by
// the name the engine called it (mcp__gate__add_comment or add_comment);
// "" for any other tool.
func DisplayName(engineTool string) string {
	name := strings.TrimPrefix(engineTool, contract.EngineToolName(""))
	for _, t := range toolDefs {
		if t.Name == name {
			return t.Title
		}
	}
	return ""
}

// The descriptions are static: they explain the mechanism, and a denial
// explains the policy, so the agent learns the rules the moment they matter.
const queuedNote = " Nothing is written immediately: the request is checked against this run's permission policy, queued, and carried out after the run ends. If the policy does not allow it, the call fails with the reason; do not repeat a denied call, adapt instead."

var toolDefs = []*mcp.Tool{
	{
		Name:        contract.ToolAddComment,
		Title:       "Comment on an issue or pull request",
		Description: "Post a comment (GitHub Markdown) on an existing issue or pull request." + queuedNote,
		InputSchema: object(map[string]any{
			"repo":   str("Repository as owner/name, e.g. octo-org/hello-world."),
			"number": map[string]any{"type": "integer", "minimum": 1, "description": "Number of the issue or pull request to comment on."},
			"body":   strMax("The comment text, GitHub Markdown.", contract.AgentBodyChars),
		}, "repo", "number", "body"),
	},
	{
		Name:        contract.ToolCreateIssue,
		Title:       "Open an issue",
		Description: "Open a new issue." + queuedNote,
		InputSchema: object(map[string]any{
			"repo":   str("Repository as owner/name."),
			"title":  strMax("Issue title, one line.", contract.AgentTitleChars),
			"body":   strMax("Issue body, GitHub Markdown.", contract.AgentBodyChars),
			"labels": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": MaxLabels, "description": "Optional label names."},
		}, "repo", "title", "body"),
	},
	{
		Name:  contract.ToolCreatePullRequest,
		Title: "Open a pull request",
		Description: "Open a pull request with the changes you made to the files in the working directory. Edit the files first; this tool commits every change in the working directory for you (the title is the commit message) and bundles the commits to be pushed after the run (you cannot push). " +
			"The pull request contains your changes since the run started (from a fork's pull request they are put on the default branch, so change only what it has too); changes to .github/workflows/ are refused unless the operator allows them, and the bundle has a size limit." + queuedNote,
		InputSchema: object(map[string]any{
			"repo":  str("Repository as owner/name; must be the repository checked out in the working directory."),
			"title": strMax("Pull request title, one line.", contract.AgentTitleChars),
			"body":  strMax("Pull request description, GitHub Markdown.", contract.AgentBodyChars),
			"base":  str("Optional; leave it out. Pull requests go into this pull request's own branch when the run was started from a pull request in the same repository (a stacked pull request), else into the default branch; naming another branch is refused."),
			"draft": map[string]any{"type": "boolean", "description": "Open as a draft pull request."},
		}, "repo", "title", "body"),
	},
	{
		Name:  contract.ToolCreateReview,
		Title: "Review the pull request",
		Description: "Post one review (a comment review: it never approves or requests changes) on the pull request where you were mentioned: a summary plus inline comments, each on a line of the pull request's diff at the commit you were given (the diff is in the context file). " +
			"side RIGHT (the default) is the pull request's version of the file (added or unchanged lines), LEFT the base's (removed lines); start_line makes a comment span lines start_line..line of one hunk. A comment on a line outside the diff is refused with the hunks that exist. A review counts as one comment on the pull request." + queuedNote,
		InputSchema: object(map[string]any{
			"repo":   str("Repository as owner/name: the pull request's."),
			"number": map[string]any{"type": "integer", "minimum": 1, "description": "Number of the pull request."},
			"body":   strMax("The review's summary, GitHub Markdown.", contract.AgentBodyChars),
			"comments": map[string]any{"type": "array", "maxItems": contract.AgentReviewCommentsMax, "description": "Inline comments (optional).",
				"items": object(map[string]any{
					"path":       strMax("File path in the repository, as the diff names it (e.g. src/app.go).", contract.AgentPathChars),
					"line":       map[string]any{"type": "integer", "minimum": 1, "description": "Line number in the file on the chosen side (the last line of a range)."},
					"start_line": map[string]any{"type": "integer", "minimum": 1, "description": "Optional first line of a range, in the same hunk."},
					"side":       map[string]any{"type": "string", "enum": []string{"RIGHT", "LEFT"}, "description": "RIGHT (default): the pull request's lines; LEFT: the base's."},
					"body":       strMax("The comment, GitHub Markdown.", contract.AgentBodyChars),
				}, "path", "line", "body")},
		}, "repo", "number", "body"),
	},
	{
		Name:  contract.ToolPushToPullRequest,
		Title: "Push a commit to the pull request",
		Description: "Commit the changes you made to the files in the working directory as one commit on the branch of the pull request where you were mentioned (the runner commits them for you with message as the commit message; you cannot push). " +
			"The commit goes on top of the head the run started from: if the branch moves before it is pushed, nothing is pushed and the requester is asked to mention the bot again. It is never a force push. Changes to .github/workflows/ are refused unless the operator allows them. A push counts as a pull request for the run's limits." + queuedNote,
		InputSchema: object(map[string]any{
			"repo":    str("Repository as owner/name: the pull request's."),
			"number":  map[string]any{"type": "integer", "minimum": 1, "description": "Number of the pull request."},
			"message": strMax("Commit message, one line.", contract.AgentTitleChars),
		}, "repo", "number", "message"),
	},
	{
		Name:        contract.ToolAddLabels,
		Title:       "Add labels",
		Description: "Add labels to the issue or pull request where you were mentioned (or one in a repository the requester allowed with repo=). Only labels the repository already has can be added (its labels are in the context file); labels are never created. Adding a label that is already there changes nothing." + queuedNote,
		InputSchema: labelsSchema("Label names to add."),
	},
	{
		Name:        contract.ToolRemoveLabels,
		Title:       "Remove labels",
		Description: "Remove labels from the issue or pull request where you were mentioned (or one in a repository the requester allowed with repo=). Removing a label that is not there changes nothing." + queuedNote,
		InputSchema: labelsSchema("Label names to remove."),
	},
	{
		Name:        contract.ToolNoop,
		Title:       "Finish without writing",
		Description: "Record that you are deliberately writing nothing to GitHub, and why (e.g. the request needs no reply, or is not something you should do). The reason appears in the run log.",
		InputSchema: object(map[string]any{
			"reason": strMax("Why nothing is written.", MaxReasonChars),
		}, "reason"),
	},
}

func labelsSchema(desc string) map[string]any {
	return object(map[string]any{
		"repo":   str("Repository as owner/name."),
		"number": map[string]any{"type": "integer", "minimum": 1, "description": "Number of the issue or pull request."},
		"labels": map[string]any{"type": "array", "minItems": 1, "maxItems": MaxLabels, "items": strMax("A label name.", MaxLabelChars), "description": desc},
	}, "repo", "number", "labels")
}

func object(props map[string]any, required ...string) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func strMax(desc string, max int) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": max, "description": desc}
}

// request is one parsed tool call.
type request struct {
	entry  outputs.Entry
	action policy.Action // zero for noop
}

func parseAddComment(raw json.RawMessage) (request, error) {
	a, err := parseArgs(contract.ToolAddComment, raw, "repo", "number", "body")
	if err != nil {
		return request{}, err
	}
	repo, n, err := a.thread()
	if err != nil {
		return request{}, err
	}
	body, err := a.text("body", contract.AgentBodyChars, false)
	if err != nil {
		return request{}, err
	}
	return request{
		entry:  outputs.Entry{Kind: policy.KindComment, Repo: repo, Number: n, Body: body},
		action: policy.Action{Kind: policy.KindComment, Repo: repo, Number: n},
	}, nil
}

func parseCreateIssue(raw json.RawMessage) (request, error) {
	a, err := parseArgs(contract.ToolCreateIssue, raw, "repo", "title", "body", "labels")
	if err != nil {
		return request{}, err
	}
	repo, title, body, err := a.titled()
	if err != nil {
		return request{}, err
	}
	labels, err := a.labels()
	if err != nil {
		return request{}, err
	}
	return request{
		entry:  outputs.Entry{Kind: policy.KindIssue, Repo: repo, Title: title, Body: body, Labels: labels},
		action: policy.Action{Kind: policy.KindIssue, Repo: repo},
	}, nil
}

// parseCreatePullRequest leaves Base empty when the agent named none; the
// gate fills in its default.
func parseCreatePullRequest(raw json.RawMessage) (request, error) {
	a, err := parseArgs(contract.ToolCreatePullRequest, raw, "repo", "title", "body", "base", "draft")
	if err != nil {
		return request{}, err
	}
	repo, title, body, err := a.titled()
	if err != nil {
		return request{}, err
	}
	base, err := a.optText("base", 255)
	if err != nil {
		return request{}, err
	}
	if base != "" && !validBranch(base) {
		return request{}, a.errf(`"base" must be a branch name such as main, got %q`, clip(base, 60))
	}
	draft, err := a.boolean("draft")
	if err != nil {
		return request{}, err
	}
	return request{
		entry:  outputs.Entry{Kind: policy.KindPullRequest, Repo: repo, Title: title, Body: body, Base: base, Draft: draft},
		action: policy.Action{Kind: policy.KindPullRequest, Repo: repo},
	}, nil
}

func parseCreateReview(raw json.RawMessage) (request, error) {
	a, err := parseArgs(contract.ToolCreateReview, raw, "repo", "number", "body", "comments")
	if err != nil {
		return request{}, err
	}
	repo, n, err := a.thread()
	if err != nil {
		return request{}, err
	}
	body, err := a.text("body", contract.AgentBodyChars, false)
	if err != nil {
		return request{}, err
	}
	comments, err := a.reviewComments()
	if err != nil {
		return request{}, err
	}
	return request{
		entry:  outputs.Entry{Kind: policy.KindReview, Repo: repo, Number: n, Body: body, Comments: comments},
		action: policy.Action{Kind: policy.KindReview, Repo: repo, Number: n},
	}, nil
}

func parsePush(raw json.RawMessage) (request, error) {
	a, err := parseArgs(contract.ToolPushToPullRequest, raw, "repo", "number", "message")
	if err != nil {
		return request{}, err
	}
	repo, n, err := a.thread()
	if err != nil {
		return request{}, err
	}
	msg, err := a.text("message", contract.AgentTitleChars, false)
	if err != nil {
		return request{}, err
	}
	return request{
		entry:  outputs.Entry{Kind: policy.KindPush, Repo: repo, Number: n, Title: msg},
		action: policy.Action{Kind: policy.KindPush, Repo: repo, Number: n},
	}, nil
}

// parseLabels reads add_labels or remove_labels; a label named twice
// (in any letter case) counts once.
func parseLabels(tool string, remove bool) func(json.RawMessage) (request, error) {
	return func(raw json.RawMessage) (request, error) {
		a, err := parseArgs(tool, raw, "repo", "number", "labels")
		if err != nil {
			return request{}, err
		}
		repo, n, err := a.thread()
		if err != nil {
			return request{}, err
		}
		ls, err := a.labels()
		if err != nil {
			return request{}, err
		}
		var uniq []string
		for _, l := range ls {
			if !slices.ContainsFunc(uniq, func(u string) bool { return strings.EqualFold(u, l) }) {
				uniq = append(uniq, l)
			}
		}
		if len(uniq) == 0 {
			return request{}, a.errf(`"labels" must name at least one label`)
		}
		return request{
			entry:  outputs.Entry{Kind: policy.KindLabels, Repo: repo, Number: n, Labels: uniq, Remove: remove},
			action: policy.Action{Kind: policy.KindLabels, Repo: repo, Number: n, Changes: len(uniq)},
		}, nil
	}
}

func parseNoop(raw json.RawMessage) (request, error) {
	a, err := parseArgs(contract.ToolNoop, raw, "reason")
	if err != nil {
		return request{}, err
	}
	reason, err := a.text("reason", MaxReasonChars, false)
	if err != nil {
		return request{}, err
	}
	return request{entry: outputs.Entry{Kind: outputs.KindNoop, Reason: reason}}, nil
}
