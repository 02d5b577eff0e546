package contract

import "sort"

// EngineModelKeys maps each engine that talks to a model API to the one
// variable its key is read from. The same name is the reusable workflow's
// secret, so the workflow, the runner's engine environment and the
// workflow trust test agree on which key the agent job of a run may hold:
// the selected engine's, no other. The replay engine has none.
var EngineModelKeys = map[string]string{
	"claude": "ANTHROPIC_API_KEY",
	"codex":  "OPENAI_API_KEY",
	"gemini": "GEMINI_API_KEY",
}

// ModelKeys lists the values of EngineModelKeys, sorted.
func ModelKeys() []string {
	out := make([]string, 0, len(EngineModelKeys))
	for _, k := range EngineModelKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
