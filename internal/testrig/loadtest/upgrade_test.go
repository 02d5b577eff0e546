package loadtest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/transport"
)

// TestUpgradeToOwnControlToken: an installation whose dispatcher wrote its
// claims, dispatched marks, rate state and ledger with the bot's token is
// given a CONTROL_TOKEN of another account. The new dispatcher reads what
// the old one left: a mention already dispatched is not dispatched again,
// the others are dispatched once, and the old ledger's grants still count.
func TestUpgradeToOwnControlToken(t *testing.T) {
	w := newWorld(t, 7)
	w.SharedBudget = true
	w.PublishControl = true
	ms, err := w.SeedMentions(12, 0)
	require.NoError(t, err)
	ctx := t.Context()

	w.DispatcherControl = ControlToken // before: everything as the bot
	_, err = w.DispatchAll(ctx, ms[:6], 3, nil)
	require.NoError(t, err)
	before := len(w.Sim.Dispatches(Control))
	require.Equal(t, 6, before)

	w.DispatcherControl = OwnControlToken // after the upgrade
	from := len(w.Sim.Requests())
	st, err := w.DispatchAll(ctx, ms, 3, nil)
	require.NoError(t, err)
	for _, m := range ms[:6] {
		assert.NotEqual(t, "dispatch", st.Decided[m.JobID], "%s was dispatched before the upgrade", m.JobID)
	}

	per := map[string]int{}
	for _, d := range w.Sim.Dispatches(Control) {
		_, p, err := transport.ParseLine(d.Body)
		require.NoError(t, err)
		per[p.JobID]++
	}
	for _, m := range ms {
		assert.Equal(t, 1, per[m.JobID], "mention %s dispatched once", m.JobID)
	}
	// after the upgrade the bot writes nothing in CONTROL (its ledger
	// falls back to the bot only while the control account is refused)
	for _, r := range w.Sim.Requests()[from:] {
		if r.Method != "GET" && r.Status/100 == 2 && strings.EqualFold(r.Login, Bot) {
			assert.NotContains(t, r.Path, "/repos/"+Control+"/", "the bot wrote %s %s", r.Method, r.Path)
		}
	}
}
