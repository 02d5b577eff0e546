package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// fileToolVocabulary maps the runner's allowed-tools vocabulary
// (MR_ALLOWED_TOOLS / the action's allowed-tools, in Claude Code's tool
// names) to the runner's checkout file tools, which engines without
// confined file tools of their own (codex, gemini) use. This is the one
// place the names are mapped; each engine then names the file tools its
// own way (Codex mcp__files__edit_file, Gemini CLI mcp_files_edit_file).
// The read tools are always on, so the read names add nothing.
var fileToolVocabulary = map[string][]string{
	"Read": nil, "Glob": nil, "Grep": nil,
	"Edit": {contract.ToolEditFile}, "MultiEdit": {contract.ToolEditFile},
	"Write": {contract.ToolWriteFile},
}

// FileTools is the list of file tools an engine that uses the runner's file
// tools gets for allowed: the read tools, plus edit_file and write_file when
// allowed names Edit/MultiEdit and Write. A name outside the vocabulary
// (Bash, WebFetch…), or a file rule with its own pattern (other than the
// runner's Read rule for the context file), is refused with an error:
// running without it would hide a misconfiguration, and these engines get
// no shell.
func FileTools(engineName string, allowed []string) ([]string, error) {
	tools := append([]string{}, contract.ReadFileTools...)
	var bad []string
	for _, t := range allowed {
		t = strings.TrimSpace(t)
		if t == "" || strings.HasPrefix(t, "Read(") {
			continue // the runner's own rule for the context file; reads are confined anyway
		}
		grant, ok := fileToolVocabulary[t]
		if !ok {
			bad = append(bad, t)
			continue
		}
		for _, g := range grant {
			if !slices.Contains(tools, g) {
				tools = append(tools, g)
			}
		}
	}
	if len(bad) > 0 {
		names := make([]string, 0, len(fileToolVocabulary))
		for n := range fileToolVocabulary {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("engine %s cannot use MR_ALLOWED_TOOLS %s: it gets the runner's checkout file tools and no shell, web or other tool; "+
			"allowed here: %s (bare names: the tools are confined to the checkout)", engineName, strings.Join(bad, ", "), strings.Join(names, ", "))
	}
	return tools, nil
}

// FileToolsSetup is what an engine that reaches the checkout only through
// the runner's file tools (codex, gemini) checks before it starts its CLI:
// an executable, a gate command, allowed tools it can grant and no budget
// it cannot keep. It returns the granted file tools and the command that
// serves them (nil when spec has no checkout).
func FileToolsSetup(engineName, bin string, spec Spec) (tools, argv []string, err error) {
	if bin == "" {
		return nil, nil, fmt.Errorf("%s engine: no %s executable configured", engineName, engineName)
	}
	if len(spec.GateCommand) == 0 || spec.GateCommand[0] == "" {
		return nil, nil, fmt.Errorf("%s engine: the gate command is empty", engineName)
	}
	tools, err = FileTools(engineName, spec.AllowedTools)
	if err != nil {
		return nil, nil, err
	}
	if err := CheckNoBudget(engineName, spec.MaxBudgetUSD); err != nil {
		return nil, nil, err
	}
	return tools, FilesArgv(spec, tools), nil
}

// FilesArgv is the command that serves tools for spec's checkout, or nil
// when the spec has none.
func FilesArgv(spec Spec, tools []string) []string {
	if len(spec.FilesCommand) == 0 || spec.FilesCommand[0] == "" {
		return nil
	}
	return append(append([]string{}, spec.FilesCommand...), "--tools", strings.Join(tools, ","))
}

// CanWrite reports whether tools include a file tool that changes files.
func CanWrite(tools []string) bool {
	for _, t := range tools {
		if slices.Contains(contract.WriteFileTools, t) {
			return true
		}
	}
	return false
}

// CheckNoBudget refuses MR_MAX_BUDGET_USD for an engine that reports
// token counts but no cost: the runner cannot keep a budget it cannot
// measure, and ignoring the setting would let a run spend past it.
func CheckNoBudget(engineName string, budgetUSD float64) error {
	if budgetUSD > 0 {
		return fmt.Errorf("engine %s cannot keep MR_MAX_BUDGET_USD=%g: its CLI reports token counts but no cost; "+
			"unset MR_MAX_BUDGET_USD (limit the run with MR_MAX_TURNS and MR_TIMEOUT) or use engine claude", engineName, budgetUSD)
	}
	return nil
}

// FilesNote is what an engine that uses the runner's file tools adds to
// the prompt: which tools reach the checkout (named by toolName, the
// engine's name for a file tool), and that nothing outside it can be read.
func FilesNote(workDir string, checkout, write bool, toolName func(string) string) string {
	if !checkout {
		return "\n\nThe repository's files are not available to you in this run.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n# The repository's files\n\nThe checkout `%s` is reachable only through these tools (paths relative to the checkout; nothing outside it can be read or written): `%s`, `%s`, `%s`",
		workDir, toolName(contract.ToolReadFile), toolName(contract.ToolListFiles), toolName(contract.ToolSearchFiles))
	if write {
		fmt.Fprintf(&b, ", and to change files `%s` and `%s`. Then open a pull request with the gate: it commits your changes", toolName(contract.ToolEditFile), toolName(contract.ToolWriteFile))
	} else {
		b.WriteString(". You cannot change files in this run")
	}
	b.WriteString(".\n")
	return b.String()
}
