// Package session holds the run's conversation in two forms: the stream of
// engine events as they arrive (Event), and the projected session in the
// shapes of seeds/core-types.txt (Session, TurnProjection, ContentBlock,
// ToolCallProjection) that session.json stores and the log issue renders.
package session

import (
	"encoding/json"
	"time"
)

// Session status values (core-types: Session Status).
const (
	StatusCreated     = "created"
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// Tool call status values (core-types: ToolCallProjection.status).
const (
	ToolPending   = "pending"
	ToolDone      = "done"
	ToolError     = "error"
	ToolCancelled = "cancelled"
)

// Session is the whole conversation of one run.
type Session struct {
	ID            string           `json:"id"`
	Intent        string           `json:"intent"`
	Status        string           `json:"status"`
	CreatedAt     time.Time        `json:"created_at"`
	UpdatedAt     time.Time        `json:"updated_at"`
	UserID        string           `json:"user_id"`
	SolutionID    *string          `json:"solution_id"`
	BizRoleID     *string          `json:"biz_role_id"`
	Model         *string          `json:"model"`
	Shared        bool             `json:"shared"`
	IsPinned      bool             `json:"is_pinned"`
	MemoryEnabled bool             `json:"memory_enabled"`
	IsPersistent  bool             `json:"is_persistent"`
	ReplayState   json.RawMessage  `json:"replay_state"`
	Turns         []TurnProjection `json:"turns"`
}

// Usage is token usage of one turn.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// TurnProjection is one message of the conversation: the user's prompt or
// one assistant reply with the tool calls it made and their results.
type TurnProjection struct {
	ID                   string               `json:"id"`
	Sequence             int                  `json:"sequence"`
	TurnID               string               `json:"turn_id"`
	LoopID               string               `json:"loop_id"`
	Kind                 string               `json:"kind"` // "message" | "compaction"
	Role                 string               `json:"role"` // "user" | "assistant" | "system"
	Status               string               `json:"status"`
	Blocks               []ContentBlock       `json:"blocks"`
	ToolCalls            []ToolCallProjection `json:"tool_calls"`
	Model                *string              `json:"model"`
	Usage                *Usage               `json:"usage"`
	DurationMS           int64                `json:"duration_ms"`
	StartedAt            *time.Time           `json:"started_at"`
	ContextWindow        int                  `json:"context_window"`
	MemoryRefs           json.RawMessage      `json:"memory_refs"`
	ParentForkToolCallID *string              `json:"parent_fork_tool_call_id"`
}

// ContentBlock is one element of a turn (text, thinking, tool_use, tool_result…).
type ContentBlock struct {
	Type        string  `json:"type"`
	Content     any     `json:"content"`
	ToolCallID  *string `json:"tool_call_id"`
	ToolName    *string `json:"tool_name"`
	DisplayName *string `json:"display_name"`
}

// ToolCallProjection is one tool call with its result.
type ToolCallProjection struct {
	ID                 string          `json:"id"`
	ToolName           string          `json:"tool_name"`
	DisplayName        string          `json:"display_name"`
	Arguments          string          `json:"arguments"` // JSON text
	Status             string          `json:"status"`
	Result             any             `json:"result"`
	DurationMS         *int64          `json:"duration_ms"`
	PendingQuestionRef json.RawMessage `json:"pending_question_ref"`
}

// EventKind says what an engine Event carries.
type EventKind string

// Engine event kinds, common to every engine (Claude Code's stream-json is
// parsed into these; the replay engine produces them directly).
const (
	EventInit       EventKind = "init"        // session started: model, tools, MCP servers
	EventText       EventKind = "text"        // assistant text
	EventThinking   EventKind = "thinking"    // assistant thinking
	EventToolUse    EventKind = "tool_use"    // assistant asks for a tool call
	EventToolResult EventKind = "tool_result" // result of a tool call
	EventUserText   EventKind = "user_text"   // user message text (the prompt)
	EventResult     EventKind = "result"      // the engine's final result
	EventNotice     EventKind = "notice"      // a system notice: hook output, API retry, compaction, status
	EventUnknown    EventKind = "unknown"     // anything else, kept raw, never fatal
)

// Event is one thing an engine reported, in order.
type Event struct {
	Kind EventKind `json:"kind"`
	Time time.Time `json:"time"`
	// MessageID groups blocks of one assistant message (one turn).
	MessageID string `json:"message_id,omitempty"`
	Model     string `json:"model,omitempty"`
	Usage     *Usage `json:"usage,omitempty"`

	Text string `json:"text,omitempty"` // text, thinking, user_text

	ToolCallID string `json:"tool_call_id,omitempty"` // tool_use, tool_result
	ToolName   string `json:"tool_name,omitempty"`    // tool_use
	// DisplayName is the tool's friendly name when the engine or the
	// tool's metadata gives one (tool_use); "" means the tool name.
	DisplayName string          `json:"display_name,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`    // tool_use arguments (JSON)
	Output      string          `json:"output,omitempty"`   // tool_result content as text
	IsError     bool            `json:"is_error,omitempty"` // tool_result, result

	Init   *Init   `json:"init,omitempty"`
	Result *Result `json:"result,omitempty"`

	Raw json.RawMessage `json:"raw,omitempty"` // unknown: the original line
}

// Init describes the engine session as it started.
type Init struct {
	SessionID  string      `json:"session_id,omitempty"`
	Model      string      `json:"model,omitempty"`
	Tools      []string    `json:"tools,omitempty"`
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	CWD        string      `json:"cwd,omitempty"`
}

// MCPServer is an MCP server the engine connected (or failed to).
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Result is how the engine said the session ended.
type Result struct {
	Subtype           string   `json:"subtype"` // success, error_max_turns, error_during_execution, error_max_budget_usd…
	IsError           bool     `json:"is_error"`
	NumTurns          int      `json:"num_turns"`
	DurationMS        int64    `json:"duration_ms"`
	TotalCostUSD      *float64 `json:"total_cost_usd,omitempty"`
	Text              string   `json:"text,omitempty"`
	PermissionDenials []string `json:"permission_denials,omitempty"` // tool names the engine itself refused
	// Errors are the engine's own error lines (error subtypes carry them
	// instead of result text).
	Errors []string `json:"errors,omitempty"`
	// ContextWindow is the model's context window in tokens, when the
	// engine reports it (Claude Code: modelUsage.*.contextWindow).
	ContextWindow int `json:"context_window,omitempty"`
	// Usage is the whole session's token usage, when reported.
	Usage *Usage `json:"usage,omitempty"`
}
