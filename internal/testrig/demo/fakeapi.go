package demo

import (
	"fmt"
	"os"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/codex"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/replay"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
	fakegemini "github.com/mention-runner/mention-runner/internal/testrig/fakemodel/gemini"
	fakeopenai "github.com/mention-runner/mention-runner/internal/testrig/fakemodel/openai"
)

// FakeAPI is a fake model API on loopback that plays a replay script to a
// real engine CLI, so `make demo ENGINE=claude|codex|gemini` runs offline.
type FakeAPI struct {
	// EngineEnv points the engine at the fake (base URL, a dummy key) and
	// names a model the fake answers for.
	EngineEnv []string
	close     func()
}

// Close stops the fake.
func (f *FakeAPI) Close() { f.close() }

// StartFakeAPI serves the replay script at path as the model's replies for
// engine (claude, codex or gemini): each tool step becomes one reply calling the
// gate tool (with the text steps before it), the trailing text the last.
func StartFakeAPI(engine, path string) (*FakeAPI, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("demo: read the script: %w", err)
	}
	steps, err := replay.ParseScript(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	switch engine {
	case EngineClaude:
		s := fakemodel.New(fakemodel.Sequence(replies(steps, "mcp__gate__")...)).Start()
		return &FakeAPI{close: s.Close, EngineEnv: []string{"ANTHROPIC_BASE_URL=" + s.URL(),
			"ANTHROPIC_API_KEY=fake-demo-key", "CLAUDE_CODE_MAX_RETRIES=0"}}, nil
	case EngineCodex:
		s := fakeopenai.New(fakemodel.Sequence(replies(steps, "mcp__gate__")...)).Start()
		return &FakeAPI{close: s.Close, EngineEnv: []string{codex.BaseURLEnv + "=" + s.URL() + "/v1",
			"OPENAI_API_KEY=fake-demo-key", "MR_MODEL=gpt-fake"}}, nil
	case EngineGemini:
		s := fakegemini.New(fakemodel.Sequence(replies(steps, "mcp_gate_")...)).Start()
		return &FakeAPI{close: s.Close, EngineEnv: []string{"GOOGLE_GEMINI_BASE_URL=" + s.URL(),
			"GEMINI_API_KEY=fake-demo-key", "MR_MODEL=gemini-fake"}}, nil
	}
	return nil, fmt.Errorf("demo: no fake model API for engine %q (want %s, %s or %s)", engine, EngineClaude, EngineCodex, EngineGemini)
}

// replies turns script steps into model replies; gate tools get prefix.
func replies(steps []replay.Step, prefix string) []fakemodel.Reply {
	var out []fakemodel.Reply
	var blocks []fakemodel.Block
	for _, s := range steps {
		switch s.Kind {
		case replay.StepText:
			blocks = append(blocks, fakemodel.TextBlock(s.Text))
		case replay.StepTool:
			blocks = append(blocks, fakemodel.ToolUseBlock("", prefix+s.Tool, s.Args))
			out = append(out, fakemodel.Reply{Content: blocks})
			blocks = nil
		}
	}
	if len(blocks) == 0 {
		blocks = []fakemodel.Block{fakemodel.TextBlock("Done.")}
	}
	return append(out, fakemodel.Reply{Content: blocks})
}
