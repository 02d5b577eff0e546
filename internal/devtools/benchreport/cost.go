package benchreport

import (
	"fmt"
	"strconv"
	"strings"
)

// HourlyWrites is the writes GitHub lets one account make in an hour; the
// cost table shows how many mentions an hour each identity's writes allow.
const HourlyWrites = 500

// CostRow is what one kind of mention cost, as measured.
type CostRow struct {
	Mention string
	// Writes per identity: the bot account, the dispatcher's
	// CONTROL_TOKEN account (0 when it is the bot's), the runner jobs'
	// workflow token; and all of them together.
	Bot, Control, Workflow, Writes int
	Requests, RoundTrips, Jobs     int
}

// CostGoal bounds the first row's figures (0 = no bound for that figure):
// the bot's writes, each other identity's writes, all writes and jobs.
type CostGoal struct {
	Label                    string
	Bot, Identity, Writes    int
	Jobs                     int
	BotPerHour, IdentityHour int // the mentions an hour those bounds allow, shown beside them
}

// CostMarkdown renders the cost rows as one table, each identity's writes
// with the mentions an hour they allow, and a last row saying whether the
// first row meets goal.
func CostMarkdown(rows []CostRow, goal CostGoal) string {
	var b strings.Builder
	b.WriteString("| mention | bot writes | dispatcher's CONTROL_TOKEN writes | workflow-token writes | all writes | requests | round trips | jobs |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d | %d |\n", cell(r.Mention),
			perHour(r.Bot), perHour(r.Control), perHour(r.Workflow), r.Writes, r.Requests, r.RoundTrips, r.Jobs)
	}
	if len(rows) == 0 || goal.Label == "" {
		return b.String()
	}
	first := rows[0]
	fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | — | — | %s |\n", cell(goal.Label),
		bound(first.Bot, goal.Bot, goal.BotPerHour), bound(first.Control, goal.Identity, goal.IdentityHour),
		bound(first.Workflow, goal.Identity, goal.IdentityHour), bound(first.Writes, goal.Writes, 0), bound(first.Jobs, goal.Jobs, 0))
	return b.String()
}

// perHour is a write count with the mentions an hour it allows.
func perHour(n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%d (%d/h)", n, HourlyWrites/n)
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
