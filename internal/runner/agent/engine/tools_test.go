package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileTools(t *testing.T) {
	read := []string{"read_file", "list_files", "search_files"}
	for _, tc := range []struct {
		name    string
		allowed []string
		want    []string
		err     string
	}{
		{"default", nil, read, ""},
		{"runner's context rule", []string{"Read(//runs/1/context.agent.json)"}, read, ""},
		{"read names add nothing", []string{"Read", "Glob", "Grep"}, read, ""},
		{"edit", []string{"Edit"}, append(append([]string{}, read...), "edit_file"), ""},
		{"pr tool set", []string{"Read(//ctx)", "Edit", "Write", "MultiEdit"}, append(append([]string{}, read...), "edit_file", "write_file"), ""},
		{"shell refused", []string{"Edit", "Bash"}, nil, "MR_ALLOWED_TOOLS Bash"},
		{"scoped rule refused", []string{"Write(/etc/**)"}, nil, "Write(/etc/**)"},
		{"typo refused", []string{"edit"}, nil, "MR_ALLOWED_TOOLS edit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FileTools("codex", tc.allowed)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Contains(t, err.Error(), "allowed here: Edit, Glob, Grep, MultiEdit, Read, Write")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, len(got) > 3, CanWrite(got))
		})
	}
}

func TestFilesArgvAndNote(t *testing.T) {
	assert.Nil(t, FilesArgv(Spec{}, []string{"read_file"}))
	assert.Equal(t, []string{"/r", "mcp-files", "--root", "/c", "--tools", "read_file,edit_file"},
		FilesArgv(Spec{FilesCommand: []string{"/r", "mcp-files", "--root", "/c"}}, []string{"read_file", "edit_file"}))
	name := func(s string) string { return "x_" + s }
	assert.Contains(t, FilesNote("/c", true, true, name), "`x_edit_file` and `x_write_file`")
	assert.Contains(t, FilesNote("/c", true, false, name), "You cannot change files")
	assert.Contains(t, FilesNote("/c", false, false, name), "not available")
}

func TestCheckNoBudget(t *testing.T) {
	assert.NoError(t, CheckNoBudget("gemini", 0))
	assert.ErrorContains(t, CheckNoBudget("gemini", 1.5), "MR_MAX_BUDGET_USD=1.5")
}

func TestFileToolsSetup(t *testing.T) {
	gate := []string{"/r", "mcp"}
	files := []string{"/r", "mcp-files", "--root", "/c"}
	for _, tc := range []struct {
		name      string
		bin       string
		spec      Spec
		wantTools []string
		wantArgv  []string
		err       string
	}{
		{"no executable", "", Spec{GateCommand: gate}, nil, nil, "codex engine: no codex executable configured"},
		{"no gate", "/bin/codex", Spec{}, nil, nil, "codex engine: the gate command is empty"},
		{"empty gate argv0", "/bin/codex", Spec{GateCommand: []string{""}}, nil, nil, "codex engine: the gate command is empty"},
		{"tool refused", "/bin/codex", Spec{GateCommand: gate, AllowedTools: []string{"Bash"}}, nil, nil, "MR_ALLOWED_TOOLS Bash"},
		{"budget refused", "/bin/codex", Spec{GateCommand: gate, MaxBudgetUSD: 2}, nil, nil, "MR_MAX_BUDGET_USD=2"},
		{"no checkout", "/bin/codex", Spec{GateCommand: gate}, []string{"read_file", "list_files", "search_files"}, nil, ""},
		{"checkout with edit", "/bin/codex", Spec{GateCommand: gate, FilesCommand: files, AllowedTools: []string{"Edit"}},
			[]string{"read_file", "list_files", "search_files", "edit_file"},
			[]string{"/r", "mcp-files", "--root", "/c", "--tools", "read_file,list_files,search_files,edit_file"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, argv, err := FileToolsSetup("codex", tc.bin, tc.spec)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Nil(t, tools)
				assert.Nil(t, argv)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantTools, tools)
			assert.Equal(t, tc.wantArgv, argv)
		})
	}
}
