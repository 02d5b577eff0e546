package benchreport

import (
	"fmt"
	"strings"
)

// Row is one figure of the table.
type Row struct {
	Name    string
	Figure  string // formatted value, or "error: …" when the measurement failed
	Unit    string
	Command string // reproduces the figure from the repository root
}

// Markdown renders rows as a GitHub table. Cells are escaped so a pipe or
// newline in an error message cannot break the table.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| name | figure | unit | command to reproduce |\n|---|---:|---|---|\n")
	for _, r := range rows {
		cmd := cell(r.Command)
		if cmd != "" {
			cmd = "`" + strings.ReplaceAll(cmd, "`", "'") + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(r.Name), cell(r.Figure), cell(r.Unit), cmd)
	}
	return b.String()
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
