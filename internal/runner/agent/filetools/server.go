package filetools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

type args struct {
	Path       string `json:"path"`
	Offset     int    `json:"offset"`
	Limit      int    `json:"limit"`
	Pattern    string `json:"pattern"`
	Glob       string `json:"glob"`
	Content    string `json:"content"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

type toolDef struct {
	tool *mcp.Tool
	run  func(f *Files, a args) (string, error)
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

func schema(props map[string]any, required ...string) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

const pathDesc = "Path relative to the checkout (the repository's root), e.g. src/main.go; absolute paths must lie inside the checkout."

var defs = []toolDef{
	{&mcp.Tool{Name: contract.ToolReadFile, Title: "Read a file in the checkout",
		Description: "Read a text file of the repository checkout, with line numbers. Only files in the checkout can be read.",
		InputSchema: schema(map[string]any{"path": prop("string", pathDesc),
			"offset": prop("integer", "First line to read (1-based); default 1."),
			"limit":  prop("integer", "How many lines to read; default all.")}, "path")},
		func(f *Files, a args) (string, error) { return f.ReadFile(a.Path, a.Offset, a.Limit) }},
	{&mcp.Tool{Name: contract.ToolListFiles, Title: "List files in the checkout",
		Description: "List the files under a directory of the repository checkout, recursively, optionally only those matching a glob pattern (e.g. *.go).",
		InputSchema: schema(map[string]any{"path": prop("string", "Directory relative to the checkout; default the whole checkout."),
			"pattern": prop("string", "Glob matched against each file's path or name, e.g. *.md; default all files.")})},
		func(f *Files, a args) (string, error) { return f.ListFiles(a.Path, a.Pattern) }},
	{&mcp.Tool{Name: contract.ToolSearchFiles, Title: "Search the checkout",
		Description: "Search the files of the repository checkout for lines matching a regular expression (RE2 syntax); answers path:line: text.",
		InputSchema: schema(map[string]any{"pattern": prop("string", "Regular expression to look for."),
			"path": prop("string", "Directory relative to the checkout; default the whole checkout."),
			"glob": prop("string", "Only files whose path or name matches this glob, e.g. *.go.")}, "pattern")},
		func(f *Files, a args) (string, error) { return f.SearchFiles(a.Pattern, a.Path, a.Glob) }},
	{&mcp.Tool{Name: contract.ToolEditFile, Title: "Edit a file in the checkout",
		Description: "Replace text in a file of the repository checkout: old_string must occur exactly once (or set replace_all). Edits stay in the working directory until you open a pull request with the gate.",
		InputSchema: schema(map[string]any{"path": prop("string", pathDesc),
			"old_string":  prop("string", "The exact text to replace."),
			"new_string":  prop("string", "The text to put in its place."),
			"replace_all": prop("boolean", "Replace every occurrence.")}, "path", "old_string", "new_string")},
		func(f *Files, a args) (string, error) {
			return f.EditFile(a.Path, a.OldString, a.NewString, a.ReplaceAll)
		}},
	{&mcp.Tool{Name: contract.ToolWriteFile, Title: "Write a file in the checkout",
		Description: "Create or replace a file of the repository checkout with the given content (directories are made as needed). Changes stay in the working directory until you open a pull request with the gate.",
		InputSchema: schema(map[string]any{"path": prop("string", pathDesc),
			"content": prop("string", "The file's whole new content.")}, "path", "content")},
		func(f *Files, a args) (string, error) { return f.WriteFile(a.Path, a.Content) }},
}

// Server returns the MCP server offering f's tools.
func (f *Files) Server(version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: contract.FilesServer, Version: version}, &mcp.ServerOptions{
		Instructions: "Read (and, when enabled, change) the files of the repository checkout at " + f.dir + ". Nothing outside it can be used.",
	})
	for _, d := range defs {
		if !slices.Contains(f.tools, d.tool.Name) {
			continue
		}
		s.AddTool(d.tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var raw json.RawMessage
			if req != nil && req.Params != nil {
				raw = req.Params.Arguments
			}
			text, err := f.call(d, raw)
			if err != nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refused: " + err.Error()}}, IsError: true}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	}
	return s
}

func (f *Files) call(d toolDef, raw json.RawMessage) (string, error) {
	var a args
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return "", fmt.Errorf("arguments of %s: %w", d.tool.Name, err)
		}
	}
	return d.run(f, a)
}

// Serve serves the tools for dir on t until the client disconnects or ctx
// ends.
func Serve(ctx context.Context, dir string, tools []string, version string, t mcp.Transport) error {
	f, err := Open(dir, tools)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	defer f.Close()
	if err := f.Server(version).Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("files: serve: %w", err)
	}
	return nil
}
