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
