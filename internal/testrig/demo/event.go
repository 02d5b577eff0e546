package demo

import (
	"fmt"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// dispatchEvent builds the event GitHub hands the workflow run d starts,
// with the control repository and the sender (the bot). GitHub writes it:
// no token of the run spends a request on it.
func (f *Flow) dispatchEvent(d githubsim.Dispatch) ([]byte, error) {
	ev, err := f.w.Sim.DispatchEvent(ControlRepo, BotLogin, d)
	if err != nil {
		return nil, fmt.Errorf("the repository_dispatch event: %w", err)
	}
	return ev, nil
}
