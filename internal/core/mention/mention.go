// Package mention finds the real mentions of the bot in a GitHub comment body
// and classifies the command after each one (SPEC §2).
//
// A mention is "@BOT" (ASCII case-insensitive) preceded by start of text,
// whitespace (Unicode, so U+00A0 counts), '(' or '[', and followed by end of
// text, whitespace or one of ".,:;!?)]". It counts only where GitHub renders
// a mention, read as CommonMark does: not inside fenced or indented code,
// inline code spans, block quotes (their lazy continuation lines included),
// HTML blocks of any kind (<pre>, <div>, comments …), inline HTML tags and
// the elements they open, link text or image descriptions (brackets that
// close later in the paragraph), link reference definitions, e-mail
// addresses or longer logins. A differential fuzz test
// (FuzzFindCommonMark) checks this against goldmark. The simplifications,
// which only ever drop mentions: a block quote is assumed to end in an open
// paragraph, an inline HTML comment runs to the first "-->" anywhere (the
// rest of that line is skipped; unclosed: to the end of the body), every
// inline element hides mentions, and a mention glued to a code span or
// comment ("`x`@bot") does not count.
//
// Decisions on commands: "!cfg" is matched ignoring case and may follow the
// login directly ("@bot!cfg"); one ',' or ':' after the login is skipped
// ("@bot, go away"); flags are the raw words to the end of that line, and
// further "@bot"s on that line are flag words, not mentions.
//
// The scan is one pass over the body: work is linear in its length whatever
// the input (no regular expressions, no rescans).
package mention

import (
	"fmt"
	"strings"
)

// Command is what the person asked the bot to do.
type Command string

const (
	CommandTask     Command = "task"
	CommandGoAway   Command = "go_away"
	CommandComeBack Command = "come_back"
)

// Mention is one real mention of the bot.
type Mention struct {
	Command   Command
	HasCfg    bool     // a "!cfg" followed the mention (even with no flags: the caller reports that as an error)
	Flags     []string // raw words after !cfg up to end of that line (never nil when HasCfg; empty slice if none)
	Line      int      // 1-based line of the mention
	Offset    int      // byte offset of the '@'
	CfgOffset int      // byte offset of its "!cfg" when HasCfg
}

// Find returns every real mention of bot (login without '@', matched
// case-insensitively) in body, in order. An invalid bot login (see ValidBot)
// finds nothing, so a misconfigured bot never triggers.
//
// Callers deciding whether to run use Read, which also reports stray !cfg
// words.
func Find(body, bot string) []Mention {
	ms, _ := find(body, bot)
	return ms
}

// find is Find plus the number of bytes the scan examined, which the tests
// use to check that the work stays linear in len(body).
func find(body, bot string) ([]Mention, int) {
	bot = strings.TrimPrefix(bot, "@")
	if ValidBot(bot) != nil {
		return nil, 0
	}
	s := scanner{body: body, bot: bot, paraStart: -1, lineNo: 1}
	s.run()
	return s.out, s.steps
}

// maxLogin bounds the bot login; GitHub logins are at most 39 characters and
// app bots add "[bot]".
const maxLogin = 64

// ValidBot reports whether login (without '@') can be searched for: 1 to 64
// ASCII letters, digits, '-', '_', '[' or ']'.
func ValidBot(login string) error {
	if login == "" {
		return fmt.Errorf("bot login is empty")
	}
	if len(login) > maxLogin {
		return fmt.Errorf("bot login %.20q… is longer than %d characters", login, maxLogin)
	}
	for i := 0; i < len(login); i++ {
		c := login[i]
		if !isASCIIAlnum(c) && c != '-' && c != '_' && c != '[' && c != ']' {
			return fmt.Errorf("bot login %q: character %q is not allowed (letters, digits, '-', '_', '[', ']')", login, c)
		}
	}
	return nil
}

// Task returns the task text for the comment: for a !cfg mention, the body
// with the "@bot !cfg flags…" span (to the end of its line) removed;
// otherwise the whole body; trimmed. For go_away/come_back it returns "".
func Task(body string, m Mention) string {
	switch m.Command {
	case CommandGoAway, CommandComeBack:
		return ""
	}
	if !m.HasCfg || m.Offset < 0 || m.Offset >= len(body) || body[m.Offset] != '@' {
		return strings.TrimSpace(body)
	}
	end := strings.IndexByte(body[m.Offset:], '\n')
	if end < 0 {
		end = len(body)
	} else {
		end += m.Offset
	}
	head := strings.TrimRight(body[:m.Offset], " \t")
	return strings.TrimSpace(head + body[end:])
}
