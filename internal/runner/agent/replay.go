package agent

import (
	"errors"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/replay"
	"github.com/mention-runner/mention-runner/internal/runner/config"
)

// newReplay builds the replay engine for MR_REPLAY_SCRIPT; a bad script
// fails here, before the engine starts.
func newReplay(cfg *config.Config) (engine.Engine, error) {
	if cfg.ReplayScript == "" {
		return nil, errors.New("engine replay needs a script: set MR_REPLAY_SCRIPT (input replay-script) to a JSONL replay script")
	}
	return replay.New(cfg.ReplayScript)
}
