package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/devtools/benchreport"
)

// dispatch reads the dispatcher figures from internal/testrig/loadtest's
// BenchmarkDispatchMention, which drives the real dispatcher, wired with
// the account's write ledger as cmd/dispatcher wires it, against the
// simulator with 50 ms of latency on every request.
func (t *tableRun) dispatch() []benchreport.Row {
	const bench = "BenchmarkDispatchMention"
	res, command, err := goBench(t.ctx, "./internal/testrig/loadtest", "^"+bench+"$", "-benchtime", "5x")
	if err != nil {
		return []benchreport.Row{benchreport.Failed("dispatcher", command, err)}
	}
	var rows []benchreport.Row
	// Goals: 0 = no goal for that figure.
	for _, sub := range []struct {
		name, label        string
		maxReqs, maxRounds float64
	}{
		{"issue/cold", "issue mention, fresh dispatcher (event mode)", 8, 4},
		{"issue/cold-hour", "issue mention, fresh dispatcher (event mode), first mention of the hour", 0, 0},
		{"issue/cold-2h", "issue mention, fresh dispatcher (event mode), one mention every 2 h", 0, 0},
		{"issue/warm", "issue mention, running dispatcher (serve)", 6, 3},
		{"issue/idle", "issue mention, running dispatcher (serve), a minute after the last", 0, 0},
		{"pr/cold", "PR mention, fresh dispatcher (event mode)", 0, 0},
		{"pr/warm", "PR mention, running dispatcher (serve)", 9, 3},
	} {
		b, ok := benchreport.Find(res, bench+"/"+sub.name)
		if !ok {
			rows = append(rows, benchreport.Failed("dispatcher: "+sub.label, command, fmt.Errorf("benchmark result %s missing", sub.name)))
			continue
		}
		rows = append(rows,
			countRow("dispatcher: requests per "+sub.label, "requests", command, b.Metrics["requests/mention"], sub.maxReqs),
			countRow("dispatcher: sequential round trips per "+sub.label, "round trips", command, b.Metrics["roundtrips/mention"], sub.maxRounds),
			benchreport.Row{Name: "dispatcher: wall time per " + sub.label + ", 50 ms latency", Figure: benchreport.Num(b.Metrics["ms/mention"]), Unit: "ms", Command: command},
		)
		if w, ok := b.Metrics["ratewrites/mention"]; ok && w > 0 {
			// serve writes the rate state once per CacheTTL, not per mention
			rows = append(rows, benchreport.Row{Name: "dispatcher: rate-state writes per " + sub.label + " (one per 30 s at most, over the run)",
				Figure: benchreport.Num(w), Unit: "requests", Command: command})
		}
	}
	return rows
}

// countRow is a request or round-trip count, with its ceiling when it has one.
func countRow(name, unit, command string, v, ceiling float64) benchreport.Row {
	if ceiling == 0 {
		return benchreport.Row{Name: name, Figure: benchreport.Num(v), Unit: unit, Command: command}
	}
	return benchreport.WithinLimit(name, unit, command, v, benchreport.LowerIsBetter, ceiling)
}

// backlog reads internal/dispatcher/dispatch's TestBacklogOnce: `dispatcher
// once` over N unread threads, 90% of them dispatched before, as
// cmd/dispatcher wires it, 50 ms on every request, in a synctest bubble
// (the time is the bubble's).
func (t *tableRun) backlog() []benchreport.Row {
	args := []string{"test", "-count=1", "-run", "^TestBacklogOnce$", "-v", "./internal/dispatcher/dispatch"}
	command := "go " + strings.Join(quoteArgs(args), " ")
	ctx, cancel := context.WithTimeout(t.ctx, 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin(), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return []benchreport.Row{benchreport.Failed("dispatcher: backlog", command, fmt.Errorf("%w: %s", err, tail(out.String(), 800)))}
	}
	var rows []benchreport.Row
	for _, line := range strings.Split(out.String(), "\n") {
		var n, reqs, trips, unread int
		var secs float64
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "backlog-bench n=%d requests=%d roundtrips=%d seconds=%g unread=%d", &n, &reqs, &trips, &secs, &unread); err != nil {
			continue
		}
		label := fmt.Sprintf("`dispatcher once`, %d unread threads (90%% dispatched before)", n)
		rows = append(rows,
			countRow("dispatcher: requests, "+label, "requests", command, float64(reqs), 0),
			countRow("dispatcher: sequential round trips, "+label, "round trips", command, float64(trips), 0),
			benchreport.Row{Name: "dispatcher: simulated time, " + label + ", 50 ms latency", Figure: benchreport.Num(secs), Unit: "s", Command: command},
			benchreport.WithinLimit("dispatcher: threads left unread, "+label, "threads", command, float64(unread), benchreport.LowerIsBetter, 0),
		)
	}
	if len(rows) == 0 {
		return []benchreport.Row{benchreport.Failed("dispatcher: backlog", command, fmt.Errorf("no backlog-bench lines in the output"))}
	}
	return rows
}
