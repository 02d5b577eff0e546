package policy

import "github.com/mention-runner/mention-runner/internal/core/mention"

// FromComment is the one reading of a trigger comment's permission flags,
// shared by the dispatcher, `dispatcher explain` and the runner: the first
// mention decides, and any other !cfg a reader would see (a later one, a
// look-alike, one on a line of its own) stops the run as a *FlagError
// instead of being silently dropped. found is false when body has no
// mention of bot; opt-out commands carry no flags and ignore strays (a
// block always applies).
func FromComment(body, bot string) (m mention.Mention, found bool, f Flags, err error) {
	ms, strays := mention.Read(body, bot)
	if len(ms) == 0 {
		return mention.Mention{}, false, Flags{}, nil
	}
	m = ms[0]
	if m.Command != mention.CommandTask {
		return m, true, Flags{}, nil
	}
	if len(strays) > 0 {
		return m, true, Flags{}, &FlagError{Kind: StrayCfg, Word: strays[0].Text, Line: strays[0].Line}
	}
	if m.HasCfg {
		f, err = ParseFlags(m.Flags)
	}
	return m, true, f, err
}
