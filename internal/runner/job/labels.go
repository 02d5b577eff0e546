package job

import (
	"encoding/json"
	"strings"
)

// Labels reads the repository labels the trusted context lists (the
// dispatcher gathers the thread repository's labels under
// contract.KeyLabels): lower-case owner/name → label names. A context
// without them gives an empty map, so no label change can be checked and
// every one is refused.
func Labels(context []byte) map[string][]string {
	var c struct {
		Repository *struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Labels *[]struct {
			Name string `json:"name"`
		} `json:"labels"`
	}
	out := map[string][]string{}
	if json.Unmarshal(context, &c) != nil || c.Repository == nil || c.Labels == nil {
		return out
	}
	names := []string{}
	for _, l := range *c.Labels {
		if l.Name != "" {
			names = append(names, l.Name)
		}
	}
	out[strings.ToLower(c.Repository.FullName)] = names
	return out
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
