package benchreport

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

func TestMarkdownGolden(t *testing.T) {
	rows := []Row{
		{Name: "transport: encode + assemble", Figure: Num(30.71), Unit: "MB/s", Command: "go test -bench '^X$' ./internal/core/transport"},
		{Name: "peak | pipes", Figure: Num(19.7), Unit: "MiB", Command: "go run `x`"},
		Failed("dispatcher", "go test ./internal/testrig/loadtest", errors.New("line one\nline | two")),
		{Name: "big", Figure: Num(1234.5), Unit: "ms"},
		VersusFloor("throughput", "MB/s", "go test -bench X", 150, 170, HigherIsBetter, 0.8),
		VersusFloor("slow", "s", "go run y", 2, 1, LowerIsBetter, 1.5),
		WithinLimit("requests", "requests", "go test -bench Z", 7, LowerIsBetter, 6),
		WithinLimit("peak", "MiB", "", 17, LowerIsBetter, 32),
	}
	got := Markdown(rows)
	golden.CheckString(t, filepath.Join("testdata", "table.golden.md"), got)
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{0.123, "0.12"}, {9.999, "10.00"}, {12.34, "12.3"}, {123.4, "123"}} {
		assert.Equal(t, tc.want, Num(tc.in))
	}
}

func TestCostMarkdownGolden(t *testing.T) {
	rows := []CostRow{
		{Mention: "issue mention, one comment", Bot: 3, Control: 7, Workflow: 9, Writes: 19,
			BotREST: 9, ControlREST: 6, WorkflowREST: 14, Requests: 49, RoundTrips: 37, Jobs: 3},
		{Mention: "sharded | 6 events", Bot: 3, Control: 12, Workflow: 36, Writes: 51,
			BotREST: 9, ControlREST: 11, WorkflowREST: 45, Requests: 112, RoundTrips: 84, Jobs: 8},
		{Mention: "CONTROL_TOKEN unset", Bot: 10, Workflow: 9, Writes: 19, BotREST: 15, WorkflowREST: 14, Requests: 49, RoundTrips: 37, Jobs: 3},
	}
	goal := CostGoal{Label: "goal", Bot: 3, BotPerHour: 150, Identity: 5, IdentityHour: 100, Writes: 8,
		WorkflowREST: 10, WorkflowRESTHour: 100, Jobs: 3}
	golden.CheckString(t, filepath.Join("testdata", "cost.golden.md"), CostMarkdown(rows, goal))
	assert.NotContains(t, CostMarkdown(rows, CostGoal{}), "goal", "no goal row without a goal")
}
