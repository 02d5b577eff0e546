package benchreport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// HourlyWrites is the writes GitHub lets one account make in an hour; the
// cost table shows how many mentions an hour each identity's writes allow.
const HourlyWrites = contract.ContentWritesPerHour

// The REST requests GitHub allows in an hour: an account's token's (the
// bot's, the CONTROL_TOKEN's) and the workflow token's, per repository,
// shared by all the control repo's jobs. The cost table shows how many
// mentions an hour each identity's requests allow.
const (
	HourlyRequests         = contract.RESTRequestsPerHour
	HourlyWorkflowRequests = contract.WorkflowTokenRequestsPerHour
)

// CostRow is what one kind of mention cost, as measured.
type CostRow struct {
	Mention string
	// Writes per identity: the bot account, the dispatcher's
	// CONTROL_TOKEN account (0 when it is the bot's), the runner jobs'
	// workflow token; and all of them together.
	Bot, Control, Workflow, Writes int
	// REST requests per identity, the same three.
	BotREST, ControlREST, WorkflowREST int
	Requests, RoundTrips, Jobs         int
}

// CostGoal bounds the first row's figures (0 = no bound for that figure):
// the bot's writes, each other identity's writes, all writes, the
// workflow token's REST requests and jobs.
type CostGoal struct {
	Label                    string
	Bot, Identity, Writes    int
	WorkflowREST             int
	Jobs                     int
	BotPerHour, IdentityHour int // the mentions an hour those bounds allow, shown beside them
	WorkflowRESTHour         int
}

// CostMarkdown renders the cost rows as one table, each identity's writes
// and REST requests with the mentions an hour they allow, and a last row
// saying whether the first row meets goal.
func CostMarkdown(rows []CostRow, goal CostGoal) string {
	var b strings.Builder
	b.WriteString("| mention | bot writes | dispatcher's CONTROL_TOKEN writes | workflow-token writes | all writes " +
		"| bot REST requests | CONTROL_TOKEN REST requests | workflow-token REST requests | requests | round trips | jobs |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %s | %s | %d | %d | %d |\n", cell(r.Mention),
			perHour(r.Bot, HourlyWrites), perHour(r.Control, HourlyWrites), perHour(r.Workflow, HourlyWrites), r.Writes,
			perHour(r.BotREST, HourlyRequests), perHour(r.ControlREST, HourlyRequests), perHour(r.WorkflowREST, HourlyWorkflowRequests),
			r.Requests, r.RoundTrips, r.Jobs)
	}
	if len(rows) == 0 || goal.Label == "" {
		return b.String()
	}
	first := rows[0]
	fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | — | — | %s | — | — | %s |\n", cell(goal.Label),
		bound(first.Bot, goal.Bot, goal.BotPerHour), bound(first.Control, goal.Identity, goal.IdentityHour),
		bound(first.Workflow, goal.Identity, goal.IdentityHour), bound(first.Writes, goal.Writes, 0),
		bound(first.WorkflowREST, goal.WorkflowREST, goal.WorkflowRESTHour), bound(first.Jobs, goal.Jobs, 0))
	return b.String()
}

// perHour is a count with the mentions an hour an hourly limit allows.
func perHour(n, hourly int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%d (%d/h)", n, hourly/n)
}

// bound is "≤ limit" with whether v meets it.
func bound(v, limit, hourly int) string {
	if limit == 0 {
		return "—"
	}
	s := "≤ " + strconv.Itoa(limit)
	if hourly > 0 {
		s += fmt.Sprintf(" (≥ %d/h)", hourly)
	}
	return s + ": " + metWord(v <= limit)
}
