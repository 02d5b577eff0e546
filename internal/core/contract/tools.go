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
	// ToolCreateReview posts one pull request review (event COMMENT) with
	// inline comments on lines of the recorded diff.
	ToolCreateReview = "create_review"
	// ToolPushToPullRequest commits the agent's changes onto the pull
	// request's own head branch (compare-and-swap on the recorded head).
	ToolPushToPullRequest = "push_to_pull_request"
	// ToolAddLabels and ToolRemoveLabels change labels that already exist
	// in the repository on an issue or pull request.
	ToolAddLabels    = "add_labels"
	ToolRemoveLabels = "remove_labels"
)

// GateTools lists the gate's tools in a fixed order.
var GateTools = []string{ToolAddComment, ToolCreateIssue, ToolCreatePullRequest, ToolCreateReview, ToolPushToPullRequest, ToolAddLabels, ToolRemoveLabels, ToolNoop}

// EngineToolName is how Claude Code names a gate tool (mcp__gate__add_comment).
func EngineToolName(tool string) string { return "mcp__" + GateServer + "__" + tool }

// FilesServer is the MCP server name of the runner's checkout file tools
// (`runner mcp-files`), through which engines without a confined file tool
// of their own (codex, gemini) read and edit the checkout.
const FilesServer = "files"

// The file tools `runner mcp-files` serves; each is confined to the checkout.
const (
	ToolReadFile    = "read_file"
	ToolListFiles   = "list_files"
	ToolSearchFiles = "search_files"
	ToolEditFile    = "edit_file"
	ToolWriteFile   = "write_file"
)

// ReadFileTools are the file tools every run gets: they change nothing.
var ReadFileTools = []string{ToolReadFile, ToolListFiles, ToolSearchFiles}

// WriteFileTools are the file tools an operator may enable for pull
// requests (MR_ALLOWED_TOOLS Edit, Write).
var WriteFileTools = []string{ToolEditFile, ToolWriteFile}
