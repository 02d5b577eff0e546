package job

import (
	"encoding/json"
	"strings"
)

// Labels reads the repository labels the trusted context lists (the
// dispatcher gathers the thread repository's under contract.KeyLabels and
// those of the repositories repo= names under contract.KeyRepoLabels):
// lower-case owner/name → label names, and for a repository repo= named
// whose labels the dispatcher could not gather, why (from the truncation
// record). A repository in neither is one whose labels were never asked
// for; no label change there can be checked, and every one is refused.
func Labels(context []byte) (names map[string][]string, missing map[string]string) {
	type label struct {
		Name string `json:"name"`
	}
	var c struct {
		Repository *struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Labels     *[]label           `json:"labels"`
		RepoLabels map[string][]label `json:"repo_labels"`
		Truncation struct {
			RepoLabels map[string]struct {
				Missing string `json:"missing"`
			} `json:"repo_labels"`
		} `json:"truncation"`
	}
	names, missing = map[string][]string{}, map[string]string{}
	if json.Unmarshal(context, &c) != nil {
		return names, missing
	}
	nameList := func(ls []label) []string {
		out := []string{}
		for _, l := range ls {
			if l.Name != "" {
				out = append(out, l.Name)
			}
		}
		return out
	}
	for repo, ls := range c.RepoLabels {
		names[strings.ToLower(repo)] = nameList(ls)
	}
	for repo, r := range c.Truncation.RepoLabels {
		if _, ok := names[strings.ToLower(repo)]; !ok && r.Missing != "" {
			missing[strings.ToLower(repo)] = r.Missing
		}
	}
	// the thread's own last: a context naming it twice is held to the
	// labels read with the thread
	if c.Repository != nil && c.Labels != nil {
		names[strings.ToLower(c.Repository.FullName)] = nameList(*c.Labels)
	}
	return names, missing
}

// CanLabel reads whether the bot may change labels in the thread's
// repository, from the repository object the dispatcher fetched with the
// bot's token (permissions.triage). known is false when the context does
// not say (a webhook's repository object carries no permissions).
func CanLabel(context []byte) (can, known bool) {
	var c struct {
		Repository *struct {
			Permissions *struct {
				Triage *bool `json:"triage"`
			} `json:"permissions"`
		} `json:"repository"`
	}
	if json.Unmarshal(context, &c) != nil || c.Repository == nil || c.Repository.Permissions == nil || c.Repository.Permissions.Triage == nil {
		return false, false
	}
	return *c.Repository.Permissions.Triage, true
}
