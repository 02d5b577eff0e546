package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Run is a run directory read back.
type Run struct {
	Dir     string
	Meta    RunMeta
	HasMeta bool
	Events  []Event
	Tools   []ToolRecord
	Errors  []ErrorRecord
	Session *session.Session  // nil without session.json
	Outputs []json.RawMessage // outputs.jsonl lines, opaque here
	// Torn lists files whose last line was cut short by a crash.
	Torn map[string]*TornLine
}

// LoadRun reads a run directory. events.jsonl is required; the other files
// are read when present.
func LoadRun(dir string) (*Run, error) {
	r := &Run{Dir: dir, Torn: map[string]*TornLine{}}
	var torn *TornLine
	var err error
	if r.Events, torn, err = ScanEvents(filepath.Join(dir, contract.EventsFile)); err != nil {
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	}
	r.noteTorn(contract.EventsFile, torn)
	if r.Tools, torn, err = ReadTools(filepath.Join(dir, contract.ToolsFile)); err != nil {
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	}
	r.noteTorn(contract.ToolsFile, torn)
	if r.Errors, torn, err = ReadErrors(filepath.Join(dir, contract.ErrorsFile)); err != nil {
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	}
	r.noteTorn(contract.ErrorsFile, torn)
	if r.Meta, r.HasMeta, err = ReadMeta(dir); err != nil {
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	}
	if r.Session, err = ReadSession(dir); err != nil {
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	}
	if r.Outputs, torn, err = readOpaqueLines(filepath.Join(dir, contract.OutputsFile)); err != nil {
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	}
	r.noteTorn(contract.OutputsFile, torn)
	return r, nil
}

func (r *Run) noteTorn(file string, t *TornLine) {
	if t != nil {
		r.Torn[file] = t
	}
}

// ReadSession reads dir/session.json; nil (and no error) when there is none.
func ReadSession(dir string) (*session.Session, error) {
	data, err := os.ReadFile(filepath.Join(dir, contract.SessionFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	var s session.Session
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read %s: %w", contract.SessionFile, err)
	}
	return &s, nil
}

func readOpaqueLines(path string) ([]json.RawMessage, *TornLine, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read outputs: %w", err)
	}
	var out []json.RawMessage
	torn, _, err := eachLine(contract.OutputsFile, data, func(line []byte) error {
		if !json.Valid(line) {
			// report it as a syntax error so a last line counts as torn
			var v any
			return json.Unmarshal(line, &v)
		}
		out = append(out, json.RawMessage(bytes.Clone(line)))
		return nil
	})
	return out, torn, err
}

// Transcript gathers what transcript.md shows. Without run.json the
// metadata comes from the events (ids, start and end, status).
func (r *Run) Transcript() Transcript {
	t := Transcript{Meta: r.Meta, Tools: dedupeTools(r.Tools), Session: r.Session, Outputs: len(r.Outputs), Errors: r.Errors}
	if len(r.Events) > 0 {
		first, last := r.Events[0], r.Events[len(r.Events)-1]
		fill(&t.Meta.RunID, first.RunID)
		fill(&t.Meta.JobID, first.TaskID)
		fill(&t.Meta.SessionID, first.SessionID)
		if t.Meta.StartedAt == nil {
			if ts, err := first.Time(); err == nil {
				t.Meta.StartedAt = &ts
			}
		}
		if t.Meta.EndedAt == nil && endStatus(last.Type) != "" {
			if ts, err := last.Time(); err == nil {
				t.Meta.EndedAt = &ts
			}
		}
	}
	// the run's end (publish) wins over the agent job's; the last one wins
	// (a job may be re-run)
	status, final := "", false
	for _, e := range r.Events {
		if s := endStatus(e.Type); s != "" {
			isRun := strings.HasPrefix(e.Type, "run.")
			if isRun || !final {
				status, final = s, isRun
			}
		}
		switch e.Type {
		case contract.EventSkillIndexed:
			t.Skills = skillsFrom(e.Data)
		}
		// errors.jsonl lists errors; failed tool calls are in the activity table
		if e.Severity == SeverityWarning && e.Type != contract.EventError && e.Type != contract.EventToolFailed {
			t.Warnings = append(t.Warnings, fmt.Sprintf("%s %s: %s", e.Timestamp, e.Type, e.Summary))
		}
	}
	fill(&t.Meta.Status, status)
	if t.Meta.Model == "" && r.Session != nil && r.Session.Model != nil {
		t.Meta.Model = *r.Session.Model
	}
	for _, f := range []string{contract.EventsFile, contract.ToolsFile, contract.ErrorsFile, contract.OutputsFile} {
		if tl := r.Torn[f]; tl != nil {
			t.Warnings = append(t.Warnings, f+": "+tl.String())
		}
	}
	return t
}

// endStatus is the status an event that ends the run ("run.completed",
// "run.failed") or the agent job ("agent.completed", "agent.failed")
// reports; "" for other events.
func endStatus(typ string) string {
	switch typ {
	case contract.EventRunCompleted, contract.EventAgentCompleted:
		return contract.StatusCompleted
	case contract.EventRunFailed, contract.EventAgentFailed:
		return contract.StatusFailed
	}
	return ""
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// skillsFrom reads a skill.indexed event's tools and MCP servers.
func skillsFrom(data json.RawMessage) []Skill {
	var d struct {
		Tools      []string            `json:"tools"`
		MCPServers []session.MCPServer `json:"mcp_servers"`
	}
	if json.Unmarshal(data, &d) != nil {
		return nil
	}
	var out []Skill
	for _, t := range d.Tools {
		out = append(out, Skill{Name: t, Kind: "tool"})
	}
	for _, s := range d.MCPServers {
		out = append(out, Skill{Name: s.Name, Kind: "mcp_server", Status: s.Status})
	}
	return out
}

// dedupeTools keeps the last record of each call id, in first-seen order
// (a resumed run may have written a call twice).
func dedupeTools(recs []ToolRecord) []ToolRecord {
	idx := map[string]int{}
	var out []ToolRecord
	for _, r := range recs {
		if i, ok := idx[r.ID]; ok {
			out[i] = r
			continue
		}
		idx[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}
