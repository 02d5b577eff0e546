package agent

import (
	"errors"

	"github.com/mention-runner/mention-runner/internal/config"
	"github.com/mention-runner/mention-runner/internal/engine"
	"github.com/mention-runner/mention-runner/internal/engine/replay"
)

// newReplay builds the replay engine for MR_REPLAY_SCRIPT; a bad script
// fails here, before the engine starts.
func newReplay(cfg *config.Config) (engine.Engine, error) {
	if cfg.ReplayScript == "" {
		return nil, errors.New("engine replay needs a script: set MR_REPLAY_SCRIPT (input replay-script) to a JSONL replay script")
	}
	return replay.New(cfg.ReplayScript)
}
