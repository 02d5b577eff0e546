package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mention-runner/mention-runner/internal/devtools/benchreport"
	"github.com/mention-runner/mention-runner/internal/runner/assemble"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/mentioncost"
)

// costCommand prints the cost table alone.
const costCommand = "go run ./cmd/benchreport table --only cost"

// costGoal is what an issue mention answered with one comment may cost:
// the bot's 500 writes an hour serve 150 mentions or more, every other
// identity's 100 or more, 8 writes in all; the workflow token's 1,000
// REST requests an hour serve 100 or more; and three jobs.
var costGoal = benchreport.CostGoal{Label: "goal (the first row)", Bot: 3, BotPerHour: 150, Identity: 5, IdentityHour: 100, Writes: 8,
	WorkflowREST: 10, WorkflowRESTHour: 100, Jobs: 3}

// cost measures what a mention costs (internal/testrig/mentioncost: the
// real dispatcher and runner jobs as processes against the simulator,
// counted in its request log) and renders it as a table of its own.
func (t *tableRun) cost() (string, error) {
	dir, err := os.MkdirTemp("", "benchreport-cost-")
	if err != nil {
		return "", fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Minute)
	defer cancel()
	bins, err := demo.Build(ctx, ".", filepath.Join(dir, "bin"))
	if err != nil {
		return "", fmt.Errorf("%w (run benchreport from the repository root)", err)
	}
	var rows []benchreport.CostRow
	for _, c := range mentioncost.Cases {
		got, err := mentioncost.Measure(ctx, mentioncost.Options{Bins: bins, WorkDir: dir}, c)
		if err != nil {
			return "", err
		}
		label := c.Label
		if got.Dispatches > 1 {
			label += fmt.Sprintf(" (%d agent_shard events)", got.Dispatches)
		}
		rows = append(rows, benchreport.CostRow{Mention: label, Bot: got.Bot, Control: got.Control, Workflow: got.Workflow, Writes: got.Writes,
			BotREST: got.BotREST, ControlREST: got.ControlREST, WorkflowREST: got.WorkflowREST,
			Requests: got.Requests, RoundTrips: got.RoundTrips, Jobs: got.Jobs})
	}
	return fmt.Sprintf("\n### Cost of a mention (`%s`)\n\n%s\n%s\n", costCommand, benchreport.CostMarkdown(rows, costGoal), costNote), nil
}

// costNote says how the table was measured, under it.
var costNote = fmt.Sprintf("Each row: one mention through `dispatcher once` and the workflow's jobs, one after another, against the simulator, "+
	"after one unmeasured mention on another thread. Writes are POST, PATCH, PUT and DELETE under /repos/ and git pushes (one each) per account, "+
	"as GitHub's content limits count them (n/h: the mentions an hour %d writes allow). "+
	"REST requests: per account, every method and answer, git's smart HTTP and GraphQL left out, as GitHub's primary limits count them "+
	"(n/h: the mentions an hour %d requests allow the bot's and the CONTROL_TOKEN's accounts, "+
	"and %d the workflow token, a limit per repository that all the control repo's jobs share; "+
	"the prepare jobs' sweeps, drawn from the job's id, add the sweep marker's read to one job in %d and a listing of the job refs to one in %d). "+
	"Requests: all, reads and git included. Round trips: the most requests that ran one after another without overlapping "+
	"(githubsim.RoundTrips on the request log, %d ms added to every request).",
	benchreport.HourlyWrites, benchreport.HourlyRequests, benchreport.HourlyWorkflowRequests, assemble.StateSweepOneIn, assemble.ShardSweepOneIn,
	mentioncost.DefaultLatency.Milliseconds())
