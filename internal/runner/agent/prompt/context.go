package prompt

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// Item is one top-level key of the context file and what it holds.
type Item struct {
	Key         string
	Description string
}

// known are the context keys the dispatcher writes (SPEC §4), in the
// order the prompt lists them, with what each holds.
var known = []struct{ key, what string }{
	{contract.KeyRepository, "the repository (GitHub API object)"},
	{contract.KeyIssue, "the issue: title, body, labels, state, author"},
	{contract.KeyPullRequest, "the pull request: title, body, head and base branches, state"},
	{contract.KeyTriggerComment, "the comment that mentioned you (its task is quoted above)"},
	{contract.KeyComments, "the thread's comments, oldest first"},
	{contract.KeyReviews, "the pull request's reviews"},
	{contract.KeyReviewComments, "review comments on the pull request's code"},
	{contract.KeyLabels, "the repository's labels (the only ones add_labels may add)"},
	{contract.KeyRepoLabels, "the labels of the repositories repo= names, by owner/name (the only ones add_labels may add on their issues)"},
	{contract.KeyDiff, "the pull request's diff"},
	{contract.KeyTruncation, "what was cut to keep the data small"},
}

// Describe lists what a context JSON object holds, with counts for lists
// and sizes for the diff, so the model knows what is there before reading.
func Describe(ctx []byte) ([]Item, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(ctx, &top); err != nil {
		return nil, fmt.Errorf("describe context: %w", err)
	}
	var out []Item
	for _, k := range known {
		raw, ok := top[k.key]
		delete(top, k.key)
		if !ok || string(raw) == "null" {
			continue
		}
		out = append(out, Item{Key: k.key, Description: k.what + detail(raw)})
	}
	rest := make([]string, 0, len(top))
	for k := range top {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		if string(top[k]) == "null" {
			continue
		}
		out = append(out, Item{Key: k, Description: "provided as is" + detail(top[k])})
	}
	return out, nil
}

// detail is " (N items)" for a list, " (N lines)" for a string.
func detail(raw json.RawMessage) string {
	switch strings.TrimSpace(string(raw))[0] {
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			return fmt.Sprintf(" (%d)", len(list))
		}
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return fmt.Sprintf(" (%d lines)", strings.Count(s, "\n")+1)
		}
	}
	return ""
}
