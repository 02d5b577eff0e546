package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

func TestMessages(t *testing.T) {
	var m Messages
	m.Prefix = "x_"
	assert.Equal(t, 1, m.Turns())
	assert.Equal(t, "x_1", m.ID())
	assert.Equal(t, "x_1", m.ID(), "text and a call of one response are one message")
	m.End()
	assert.Equal(t, 1, m.Turns(), "a message ends, the next starts only with the next event")
	m.End()
	assert.Equal(t, "x_2", m.ID(), "two results in a row end one message")
	assert.Equal(t, 2, m.Turns())

	// TurnLimit counts the same turns from the ids.
	lim := TurnLimit{Max: 2}
	var n Messages
	assert.False(t, lim.Observe(session.Event{Kind: session.EventToolUse, MessageID: n.ID()}))
	n.End()
	assert.False(t, lim.Observe(session.Event{Kind: session.EventToolResult}))
	assert.False(t, lim.Observe(session.Event{Kind: session.EventToolUse, MessageID: n.ID()}))
	n.End()
	assert.True(t, lim.Observe(session.Event{Kind: session.EventToolResult}), "a result after the last allowed turn stops the run")
	assert.Equal(t, n.Turns(), lim.Turns())
}
