package benchreport

import (
	"fmt"
	"strings"
)

// Row is one figure of the table: ours, and where the row has one, the
// floor measured in the same run, their ratio, the goal and whether it is met.
type Row struct {
	Name    string
	Figure  string // formatted value, or "error: …" when the measurement failed
	Unit    string
	Command string // reproduces the figure from the repository root
	Floor   string // the floor's figure ("" = the row has no floor)
	Ratio   string // ours / floor
	Goal    string // e.g. "≥ 0.8× floor", "≤ 6"
	Met     string // "met", "not met" or "" when the row has no goal
}

// Markdown renders rows as a GitHub table. Cells are escaped so a pipe or
// newline in an error message cannot break the table.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| name | ours | floor | ratio | goal | met | unit | command to reproduce |\n|---|---:|---:|---:|---|---|---|---|\n")
	for _, r := range rows {
		cmd := cell(r.Command)
		if cmd != "" {
			cmd = "`" + strings.ReplaceAll(cmd, "`", "'") + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(r.Name), cell(r.Figure),
			dash(r.Floor), dash(r.Ratio), dash(r.Goal), dash(r.Met), cell(r.Unit), cmd)
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return cell(s)
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// Num formats a figure with a precision that suits its size.
func Num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// Failed is the row for a measurement that could not be taken: the table
// still prints, and says why.
func Failed(name, command string, err error) Row {
	return Row{Name: name, Figure: "error: " + err.Error(), Command: command}
}

// Direction says which way a figure improves.
type Direction int

const (
	HigherIsBetter Direction = iota // throughput
	LowerIsBetter                   // time, memory, request counts
)

// VersusFloor is a row comparing ours with the floor measured in the same
// run; the goal is a bound on ours/floor (at least goal for throughput, at
// most goal for times).
func VersusFloor(name, unit, command string, ours, floor float64, dir Direction, goal float64) Row {
	r := Row{Name: name, Figure: Num(ours), Unit: unit, Command: command, Floor: Num(floor)}
	if floor <= 0 {
		r.Ratio, r.Met = "n/a", "not met"
		return r
	}
	ratio := ours / floor
	r.Ratio = fmt.Sprintf("%.2f×", ratio)
	met := ratio >= goal
	r.Goal = fmt.Sprintf("≥ %.2g× floor", goal)
	if dir == LowerIsBetter {
		met = ratio <= goal
		r.Goal = fmt.Sprintf("≤ %.2g× floor", goal)
	}
	r.Met = metWord(met)
	return r
}

// WithinLimit is a row whose goal is an absolute bound on ours.
func WithinLimit(name, unit, command string, ours float64, dir Direction, limit float64) Row {
	r := Row{Name: name, Figure: Num(ours), Unit: unit, Command: command}
	if dir == LowerIsBetter {
		r.Goal, r.Met = "≤ "+Num(limit), metWord(ours <= limit)
	} else {
		r.Goal, r.Met = "≥ "+Num(limit), metWord(ours >= limit)
	}
	return r
}

func metWord(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}
