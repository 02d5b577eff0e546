package main

import (
	"fmt"

	"github.com/mention-runner/mention-runner/internal/benchreport"
)

// dispatch reads the dispatcher figures from internal/loadtest's
// BenchmarkDispatchMention, which drives the real dispatcher against the
// simulator with 50 ms of latency on every request.
func (t *tableRun) dispatch() []benchreport.Row {
	const bench = "BenchmarkDispatchMention"
	res, command, err := goBench(t.ctx, "./internal/loadtest", "^"+bench+"$", "-benchtime", "5x")
	if err != nil {
		return []benchreport.Row{benchreport.Failed("dispatcher", command, err)}
	}
	var rows []benchreport.Row
	for _, sub := range []struct{ name, label string }{
		{"issue/cold", "issue mention, fresh dispatcher (event mode)"},
		{"issue/warm", "issue mention, running dispatcher (serve/poll)"},
		{"pr/cold", "PR mention, fresh dispatcher (event mode)"},
		{"pr/warm", "PR mention, running dispatcher (serve/poll)"},
	} {
		b, ok := benchreport.Find(res, bench+"/"+sub.name)
		if !ok {
			rows = append(rows, benchreport.Failed("dispatcher: "+sub.label, command, fmt.Errorf("benchmark result %s missing", sub.name)))
			continue
		}
		rows = append(rows,
			benchreport.Row{Name: "dispatcher: requests per " + sub.label, Figure: benchreport.Num(b.Metrics["requests/mention"]), Unit: "requests", Command: command},
			benchreport.Row{Name: "dispatcher: sequential round trips per " + sub.label, Figure: benchreport.Num(b.Metrics["roundtrips/mention"]), Unit: "round trips", Command: command},
			benchreport.Row{Name: "dispatcher: wall time per " + sub.label + ", 50 ms latency", Figure: benchreport.Num(b.Metrics["ms/mention"]), Unit: "ms", Command: command},
		)
	}
	return rows
}
