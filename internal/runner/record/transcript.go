package record

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Transcript is everything transcript.md shows.
type Transcript struct {
	Meta     RunMeta
	Skills   []Skill
	Tools    []ToolRecord
	Session  *session.Session // nil: none recorded
	Outputs  int              // writes the agent asked for (outputs.jsonl)
	Errors   []ErrorRecord
	Warnings []string
}

// Skill is a tool or MCP server the engine had.
type Skill struct {
	Name   string
	Kind   string // "tool" or "mcp_server"
	Status string // MCP servers: connected, failed…
}

// transcriptResultChars: the transcript summarises, so results are cut
// shorter than on GitHub (the full ones are in session.json).
const transcriptResultChars = 1500

// RenderTranscript renders transcript.md (SPEC §5), deterministically.
func RenderTranscript(t Transcript) string {
	var b strings.Builder
	m := t.Meta
	b.WriteString("# Run Transcript\n\n## Metadata\n\n")
	item := func(k, v string) {
		if v = render.Inline(v); v == "" {
			v = "(unknown)"
		}
		fmt.Fprintf(&b, "- %s: %s\n", k, v)
	}
	item("Run", m.RunID)
	item("Job", m.JobID)
	item("Session", m.SessionID)
	item("Target", strings.TrimSpace(m.Target+" "+m.TargetURL))
	item("Trigger author", m.TriggerAuthor)
	item("Trigger", m.TriggerURL)
	item("Workflow run", m.WorkflowRunURL)
	item("Engine", m.Engine)
	item("Model", m.Model)
	item("Started", stamp(m.StartedAt))
	item("Ended", stamp(m.EndedAt))
	if m.StartedAt != nil && m.EndedAt != nil {
		item("Duration", m.EndedAt.Sub(*m.StartedAt).Round(time.Millisecond).String())
	}
	item("Status", m.Status)

	b.WriteString("\n## Prompt\n\n")
	if strings.TrimSpace(m.Prompt) == "" {
		b.WriteString("(none recorded)\n")
	} else {
		b.WriteString(render.Fenced("text", m.Prompt))
	}

	b.WriteString("\n## Effective Role Summary\n\n")
	if p := render.Inline(m.PolicyWords); p != "" {
		fmt.Fprintf(&b, "Effective policy: `%s`\n\n", strings.ReplaceAll(p, "`", "'"))
	} else {
		b.WriteString("Effective policy: (none recorded)\n\n")
	}
	b.WriteString("The agent held no token that can write to GitHub; every write it asked for went through the gate and is checked again before publishing.\n")

	b.WriteString("\n## Skills Used\n\n")
	writeSkills(&b, t.Skills)

	b.WriteString("\n## Tool Activity Summary\n\n")
	writeToolSummary(&b, t.Tools)

	b.WriteString("\n## Work Notes\n\n")
	if t.Session == nil {
		b.WriteString("(no session recorded)\n")
	} else {
		b.WriteString(render.SessionTurns(*t.Session, render.SessionOptions{MaxResultChars: transcriptResultChars}))
	}

	b.WriteString("\n## Deliverables\n\n")
	fmt.Fprintf(&b, "Writes requested through the gate: %d (outputs.jsonl)\n\n", t.Outputs)
	b.WriteString(render.TrackingLists(m.Deliverables))

	b.WriteString("\n## Errors and Warnings\n\n")
	if len(t.Errors) == 0 && len(t.Warnings) == 0 {
		b.WriteString("None.\n")
	}
	for _, e := range t.Errors {
		rec := ""
		if e.Recoverable {
			rec = " (recoverable)"
		}
		fmt.Fprintf(&b, "- error %s %s: %s%s\n", render.Inline(e.Timestamp), render.Inline(e.Kind), render.Inline(e.Message), rec)
	}
	for _, w := range t.Warnings {
		fmt.Fprintf(&b, "- warning %s\n", render.Inline(w))
	}
	return redact.String(b.String())
}

// WriteTranscript writes dir/transcript.md, replacing it whole.
func WriteTranscript(dir string, t Transcript) error { return WriteTranscriptFS(nil, dir, t) }

// WriteTranscriptFS is WriteTranscript through fsys (nil = the OS).
func WriteTranscriptFS(fsys localfs.FS, dir string, t Transcript) error {
	return writeFileFS(fsys, filepath.Join(dir, contract.TranscriptFile), []byte(RenderTranscript(t)))
}

func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeFormat)
}

func writeSkills(b *strings.Builder, skills []Skill) {
	var tools, servers []string
	for _, s := range skills {
		if s.Kind == "mcp_server" {
			servers = append(servers, render.Inline(s.Name)+" ("+render.Inline(nonEmpty(s.Status, "unknown"))+")")
		} else {
			tools = append(tools, render.Inline(s.Name))
		}
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "(none)"
		}
		return strings.Join(xs, ", ")
	}
	fmt.Fprintf(b, "- Tools: %s\n- MCP servers: %s\n", list(tools), list(servers))
}

// toolStats is one row of the activity table.
type toolStats struct {
	name            string
	calls, failures int
	totalMS, timed  int64
}

func writeToolSummary(b *strings.Builder, recs []ToolRecord) {
	if len(recs) == 0 {
		b.WriteString("No tool calls.\n")
		return
	}
	by := map[string]*toolStats{}
	total := &toolStats{name: "**Total**"}
	for _, r := range recs {
		s := by[r.Name]
		if s == nil {
			s = &toolStats{name: r.Name}
			by[r.Name] = s
		}
		for _, x := range []*toolStats{s, total} {
			x.calls++
			if r.Status != "done" {
				x.failures++
			}
			if r.DurationMS != nil {
				x.totalMS += *r.DurationMS
				x.timed++
			}
		}
	}
	rows := make([]*toolStats, 0, len(by))
	for _, s := range by {
		rows = append(rows, s)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].calls != rows[j].calls {
			return rows[i].calls > rows[j].calls
		}
		return rows[i].name < rows[j].name
	})
	b.WriteString("| Tool | Calls | Not done | Total ms | Avg ms |\n|---|---:|---:|---:|---:|\n")
	for _, s := range append(rows, total) {
		name := s.name
		if s != total {
			name = strings.ReplaceAll(render.Inline(name), "|", "\\|")
		}
		avg := "–"
		if s.timed > 0 {
			avg = fmt.Sprint(s.totalMS / s.timed)
		}
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s |\n", name, s.calls, s.failures, s.totalMS, avg)
	}
	b.WriteString("\n\"Not done\" counts failed, cancelled and unanswered calls.\n")
}
