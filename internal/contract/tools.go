package contract

// GateServer is the gate's MCP server name; Claude Code calls its tools
// mcp__gate__<tool>.
const GateServer = "gate"

// The gate's tools.
const (
	ToolAddComment        = "add_comment"
	ToolCreateIssue       = "create_issue"
	ToolCreatePullRequest = "create_pull_request"
	ToolNoop              = "noop"
)

// GateTools lists the gate's tools in a fixed order.
var GateTools = []string{ToolAddComment, ToolCreateIssue, ToolCreatePullRequest, ToolNoop}

// EngineToolName is how Claude Code names a gate tool (mcp__gate__add_comment).
func EngineToolName(tool string) string { return "mcp__" + GateServer + "__" + tool }
