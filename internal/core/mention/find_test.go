package mention

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// want is a mention without its offset; offsets are checked by invariants
// (checkInvariants) and by TestFindOffsets.
type want struct {
	cmd   Command
	line  int
	flags []string // nil: no !cfg
}

func task(line int) want   { return want{cmd: CommandTask, line: line} }
func goAway(line int) want { return want{cmd: CommandGoAway, line: line} }
func comeBack(line int) want {
	return want{cmd: CommandComeBack, line: line}
}
func cfg(line int, flags ...string) want {
	if flags == nil {
		flags = []string{}
	}
	return want{cmd: CommandTask, line: line, flags: flags}
}

// findCases are the table of TestFind; the differential test reads them too.
var findCases = []struct {
	name string
	body string
	want []want
}{
	// The mention itself.
	{"alone", "@bot", []want{task(1)}},
	{"start of text", "@bot fix it", []want{task(1)}},
	{"after space", "hey @bot fix it", []want{task(1)}},
	{"upper case", "@BOT fix it", []want{task(1)}},
	{"mixed case", "@BoT fix it", []want{task(1)}},
	{"in parens", "(@bot)", []want{task(1)}},
	{"in brackets", "[@bot]", nil},
	{"link text", "[@bot](https://example.com)", nil},
	{"after tab", "x\t@bot", []want{task(1)}},
	{"after nbsp", "x\u00a0@bot", []want{task(1)}},
	{"before nbsp", "@bot\u00a0fix", []want{task(1)}},
	{"before ideographic space", "@bot\u3000fix", []want{task(1)}},
	{"not the bot", "@other fix it", nil},
	{"empty", "", nil},
	{"bare at", "@", nil},
	{"truncated login", "@bo", nil},

	// Following punctuation.
	{"period", "thanks @bot.", []want{task(1)}},
	{"comma", "@bot, fix it", []want{task(1)}},
	{"colon", "@bot: fix it", []want{task(1)}},
	{"semicolon", "@bot; fix it", []want{task(1)}},
	{"bang", "@bot!", []want{task(1)}},
	{"question", "@bot?", []want{task(1)}},
	{"close paren", "(cc @bot)", []want{task(1)}},
	{"close bracket", "[cc @bot]", nil},
	{"CR", "@bot\r\nfix", []want{task(1)}},

	// Not a mention.
	{"email", "me@bot.com", nil},
	{"email short", "x@bot", nil},
	{"longer login hyphen", "@bot-fan", nil},
	{"longer login letter", "@bots", nil},
	{"longer login underscore", "@bot_x", nil},
	{"longer login digit", "@bot2", nil},
	{"slash after", "@bot/repo", nil},
	{"apostrophe after", "@bot's", nil},
	{"quote before", "\"@bot\"", nil},
	{"double at", "@@bot", nil},
	{"url", "https://github.com/@bot", nil},
	{"escaped at", `\@bot`, nil},
	{"backslash before", `x\ @bot`, []want{task(1)}},
	{"non-space unicode before", "é@bot", nil},
	{"longer login unicode after", "@botй", nil},

	// Fenced code.
	{"in backtick fence", "```\n@bot\n```", nil},
	{"in tilde fence", "~~~\n@bot\n~~~", nil},
	{"after fence", "```\n@bot\n```\n@bot", []want{task(4)}},
	{"fence with info", "```go\n@bot\n```\n@bot", []want{task(4)}},
	{"fence indented 3", "   ```\n@bot\n   ```\n@bot", []want{task(4)}},
	{"fence indented 4 is code", "    ```\n@bot", []want{task(2)}},
	{"unclosed fence", "```\n@bot\n\n@bot", nil},
	{"closing fence longer", "```\n@bot\n`````\n@bot", []want{task(4)}},
	{"closing fence shorter", "````\n@bot\n```\n@bot\n````\n@bot", []want{task(6)}},
	{"closing fence other char", "```\n@bot\n~~~\n@bot\n```\n@bot", []want{task(6)}},
	{"closing fence with text", "```\n@bot\n``` x\n@bot\n```\n@bot", []want{task(6)}},
	{"closing fence indented 4", "```\n@bot\n    ```\n@bot\n```\n@bot", []want{task(6)}},
	{"fence interrupts paragraph", "text\n```\n@bot\n```", nil},
	{"backtick info with backtick is not a fence", "```a`b\n@bot", []want{task(2)}},
	{"two backticks not a fence", "``\n@bot\n``", nil}, // a code span instead
	{"fence CRLF", "```\r\n@bot\r\n```\r\n@bot", []want{task(4)}},
	{"fence close with trailing spaces", "```\n@bot\n```  \n@bot", []want{task(4)}},
	{"mention before fence", "@bot\n```\n@bot\n```", []want{task(1)}},

	// Indented code.
	{"indented 4", "    @bot", nil},
	{"indented tab", "\t@bot", nil},
	{"indented after blank", "text\n\n    @bot", nil},
	{"indented cannot interrupt paragraph", "text\n    @bot", []want{task(2)}},
	{"indent 3 is text", "   @bot", []want{task(1)}},
	{"after indented code", "    code\n@bot", []want{task(2)}},

	// Inline code spans.
	{"in code span", "`@bot`", nil},
	{"next to code span", "`x` @bot", []want{task(1)}},
	{"glued to code span", "`x`@bot", nil},
	{"double backtick span", "``a ` @bot ``", nil},
	{"unmatched backtick literal", "` @bot", []want{task(1)}},
	{"unequal runs literal", "`` @bot `", []want{task(1)}},
	{"span across lines", "`a\n@bot`", nil},
	{"span ends at paragraph", "`a\n\n@bot `", []want{task(3)}},
	{"span after unmatched longer run", "``` x` @bot `", nil},
	{"escaped backtick", "\\` @bot `", []want{task(1)}},
	{"escaped backtick of run", "\\`` @bot `", nil},
	{"backslash inside span is literal", "`a\\` @bot `", []want{task(1)}},
	{"several spans", "`a` @bot `b` `@bot`", []want{task(1)}},
	{"NOTE block self mention", "> Type `@bot go away` to block", nil},
	{"code span in heading", "# `@bot` @bot", []want{task(1)}},

	// Block quotes.
	{"quote", "> @bot", nil},
	{"quote no space", ">@bot", nil},
	{"quote indented", "   > @bot", nil},
	{"quote indented 4 is code", "    > @bot", nil},
	{"nested quote", ">>> @bot", nil},
	{"line after quote", "> quoted\n@bot", nil},
	{"quote interrupts paragraph", "text\n> @bot", nil},
	{"quote between", "@bot a\n> @bot\n\n@bot b", []want{task(1), task(4)}},
	{"gt inside text", "a > @bot", []want{task(1)}},

	// HTML comments.
	{"in comment", "<!-- @bot -->", nil},
	{"after comment", "<!-- x --> @bot", nil},
	{"glued after comment", "<!-- x -->@bot", nil},
	{"comment across lines", "<!--\n@bot\n-->\n@bot", []want{task(4)}},
	{"comment with blank line", "<!--\n\n@bot\n\n-->\n@bot", []want{task(6)}},
	{"unclosed comment", "<!-- @bot\n\n@bot", nil},
	{"inline comment", "a <!-- @bot --> b @bot", []want{task(1)}},
	{"inline comment across lines", "a <!-- x\n@bot --> b\n@bot", []want{task(3)}},
	{"empty comment", "<!----> @bot", nil},
	{"abrupt comment", "<!--> @bot", nil},
	{"abrupt comment dash", "<!---> @bot", nil},
	{"escaped comment", "\\<!-- @bot -->", []want{task(1)}},
	{"comment in code span", "`<!--` @bot", []want{task(1)}},
	{"comment hides fence", "<!--\n```\n-->\n@bot", []want{task(4)}},
	{"fence hides comment", "```\n<!--\n```\n@bot", []want{task(4)}},
	{"code span in comment", "<!-- ` --> @bot `", nil},
	{"comment in code span then mention", "` <!-- ` @bot -->", []want{task(1)}},
	{"comment in quote does not run on", "> <!--\n@bot", nil},
	{"text after multi-line comment close", "<!--\nx\n--> @bot", nil},
	{"indented after comment block", "<!-- x -->\n    @bot", nil},
	{"paragraph comment spanning blank line", "a <!-- x\n\n@bot\n--> @bot", nil},
	{"two comments", "<!-- a --> <!-- @bot --> @bot", nil},

	// Lists.
	{"list item", "- @bot fix", []want{task(1)}},
	{"ordered item", "1. @bot fix", []want{task(1)}},
	{"quote in list item", "- > @bot", nil},
	{"fence in list item", "- ```\n  @bot\n  ```\n- @bot", []want{task(4)}},
	{"fence ends with list item", "- ```\n  @bot\n\n@bot", []want{task(4)}},
	{"list paragraph indented 4", "- item\n\n    @bot", []want{task(3)}},
	{"code in list item", "- item\n\n      @bot", nil},
	{"item starting with code", "-     @bot", nil},
	{"nested list quote", "- a\n  - > @bot", nil},
	{"thematic break", "* * *\n\n    @bot", nil},
	{"setext underline ends paragraph", "title\n-\n    @bot", nil},
	{"setext equals ends paragraph", "title\n===\n    @bot", nil},
	{"equals without paragraph is text", "===\n@bot", []want{task(2)}},
	{"empty item then blank closes it", "* \n\n   ```\n@bot", nil},
	{"empty item holds next line", "-\n  @bot", []want{task(2)}},
	{"empty item cannot interrupt paragraph", "text\n-\n    @bot", nil}, // setext
	{"ordered 2 cannot interrupt paragraph", "text\n2. x\n    @bot", []want{task(3)}},
	{"lazy line starts new list", "- a\n  b\n2. ~~~\n   @bot", nil},
	{"thematic break in list item", "1. ***\n    -\n\t    - @bot", []want{task(3)}},
	{"html block has no code spans", "<!-- c --> ` (@bot) `", nil},
	// Where GitHub shows no mention: lazy quote lines, HTML
	// blocks of every kind, inline elements, links, definitions.
	{"lazy quote continuation", "> **Note**\n@bot go away", nil},
	{"lazy quote in list", "- > a\n  @bot", nil},
	{"lazy quote ordered item", "> a\n2. @bot", nil},
	{"quote ended by blank", "> a\n\n@bot", []want{task(3)}},
	{"quote ended by heading", "> a\n# @bot", []want{task(2)}},
	{"quote ended by bullet", "> a\n- @bot", []want{task(2)}},
	{"pre block", "<pre>\n@bot\n</pre>\n@bot", []want{task(4)}},
	{"PRE block upper case", "<PRE class=x>\n\n@bot\n</PRE>", nil},
	{"div block", "<div>\n@bot\n</div>", nil},
	{"div block ends at blank", "<div>\n\n@bot\n\n</div>", []want{task(3)}},
	{"div interrupts paragraph", "hi\n<div>\n@bot", nil},
	{"type 7 block", "<a href=x>\n@bot</a>", nil},
	{"type 7 does not interrupt", "hi\n<a href=x>\n@bot</a>", nil},
	{"inline pre", "a <pre> @bot </pre> @bot", []want{task(1)}},
	{"inline code element", "a <code>\n@bot</code>", nil},
	{"attribute value", "a <span title=\" @bot\">x</span>", nil},
	{"tag closed", "a <b>x</b> @bot", []want{task(1)}},
	{"void tag", "a <br> @bot", []want{task(1)}},
	{"self-closing tag", "a <x/> @bot", []want{task(1)}},
	{"processing instruction", "a <? @bot ?> b", nil},
	{"declaration", "a <!X @bot > b", nil},
	{"cdata", "a <![CDATA[ @bot ]]> b", nil},
	{"link spaced", "[ @bot ](http://x)", nil},
	{"image", "![ @bot](x.png)", nil},
	{"brackets closed before", "[x] @bot", []want{task(1)}},
	{"definition", "[x]: http://x '@bot'\n@bot", nil},
	{"comment close ends list item", "- <!--\n@bot -->\n   ```\n@bot", []want{task(2)}},
	{"comment close inside list item", "- <!--\n  x -->\n   ```\n  @bot\n@bot", []want{task(5)}},
	{"heading", "## @bot fix", []want{task(1)}},
	{"hash no space is text", "#@bot", nil},

	// Commands.
	{"go away", "@bot go away", []want{goAway(1)}},
	{"go away case", "@BOT Go Away", []want{goAway(1)}},
	{"go away punct", "@bot go away!", []want{goAway(1)}},
	{"go away comma", "@bot, go away.", []want{goAway(1)}},
	{"go away colon", "@bot: go away", []want{goAway(1)}},
	{"go away spaces", "@bot   go \t away please", []want{goAway(1)}},
	{"go away nbsp", "@bot\u00a0go\u00a0away", []want{goAway(1)}},
	{"go awayyy", "@bot go awayyy", []want{task(1)}},
	{"goaway", "@bot goaway", []want{task(1)}},
	{"go newline away", "@bot go\naway", []want{task(1)}},
	{"newline go away", "@bot\ngo away", []want{task(1)}},
	{"go away later", "@bot please go away", []want{task(1)}},
	{"come back", "@bot come back", []want{comeBack(1)}},
	{"come back case", "@bot COME BACK.", []want{comeBack(1)}},
	{"come backs", "@bot come backs", []want{task(1)}},
	{"go away CRLF", "@bot go away\r\n", []want{goAway(1)}},

	// !cfg.
	{"cfg spec 1", "@bot !cfg comment-only here-only", []want{cfg(1, "comment-only", "here-only")}},
	{"cfg spec 2", "@bot !cfg repo=foo/bar pr-limit=0\nFix it.", []want{cfg(1, "repo=foo/bar", "pr-limit=0")}},
	{"cfg no flags", "@bot !cfg", []want{cfg(1)}},
	{"cfg no flags newline", "@bot !cfg   \nfix", []want{cfg(1)}},
	{"cfg glued to mention", "@bot!cfg no-pr", []want{cfg(1, "no-pr")}},
	{"cfg upper", "@bot !CFG no-pr", []want{cfg(1, "no-pr")}},
	{"cfg glued word", "@bot !cfgno-pr", []want{cfg(1, "!cfgno-pr")}},
	{"cfg glued colon", "@bot !cfg:no-pr", []want{cfg(1, "!cfg:no-pr")}},
	{"cfg CRLF", "@bot !cfg no-pr\r\nfix", []want{cfg(1, "no-pr")}},
	{"cfg tabs and nbsp", "@bot\t!cfg\tno-pr\u00a0no-issue", []want{cfg(1, "no-pr", "no-issue")}},
	{"cfg later on line is task", "@bot fix !cfg no-pr", []want{task(1)}},
	{"cfg on next line is task", "@bot\n!cfg no-pr", []want{task(1)}},
	{"mention in cfg line is a flag", "@bot !cfg no-pr @bot", []want{cfg(1, "no-pr", "@bot")}},
	{"cfg then mention next line", "@bot !cfg no-pr\n@bot go away", []want{cfg(1, "no-pr"), goAway(2)}},
	{"cfg in code span", "`@bot !cfg no-pr` @bot", []want{task(1)}},
	{"cfg after mid-line mention", "please @bot !cfg here-only", []want{cfg(1, "here-only")}},

	// Several mentions and lines.
	{"multiple", "@bot a\n\n@bot go away\n@BOT come back", []want{task(1), goAway(3), comeBack(4)}},
	{"two on a line", "@bot and @bot", []want{task(1), task(1)}},
	{"line numbers CRLF", "a\r\nb\r\n@bot", []want{task(3)}},
	{"mixed", "```\n@bot\n```\n> @bot\n`@bot` <!-- @bot -->\n\n    @bot\n@bot go away", []want{goAway(8)}},
	{"invalid utf8", "\xff@bot \xfe @bot \xff @bot\xff", []want{task(1)}},
}

func TestFind(t *testing.T) {
	tests := findCases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := Find(tt.body, "bot")
			checkInvariants(t, tt.body, "bot", ms)
			var got []want
			for _, m := range ms {
				got = append(got, want{cmd: m.Command, line: m.Line, flags: m.Flags})
			}
			assert.Equal(t, tt.want, got, "body %q", tt.body)
		})
	}
}

func TestFindOffsets(t *testing.T) {
	body := "hi @bot\n`@bot` (@BOT go away)\n@bot !cfg no-pr"
	ms := Find(body, "bot")
	require.Len(t, ms, 3)
	assert.Equal(t, Mention{Command: CommandTask, Line: 1, Offset: 3}, ms[0])
	assert.Equal(t, Mention{Command: CommandGoAway, Line: 2, Offset: 16}, ms[1])
	assert.Equal(t, Mention{Command: CommandTask, HasCfg: true, Flags: []string{"no-pr"}, Line: 3, Offset: 30, CfgOffset: 35}, ms[2])
}

func TestFindBotLogin(t *testing.T) {
	tests := []struct {
		name, bot, body string
		n               int
	}{
		{"at prefix", "@bot", "@bot", 1},
		{"mixed case login", "WhiteElephantIsNotARobot", "@whiteelephantisnotarobot hi", 1},
		{"hyphen login", "white-elephant", "@white-elephant hi @white", 1},
		{"app bot", "my-app[bot]", "@my-app[bot] hi", 1},
		{"empty", "", "@ hi", 0},
		{"space", "b o", "@b o", 0},
		{"regexp chars", "b.t", "@bot", 0},
		{"too long", strings.Repeat("a", 65), "@" + strings.Repeat("a", 65), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Len(t, Find(tt.body, tt.bot), tt.n)
		})
	}
}

func TestValidBot(t *testing.T) {
	assert.NoError(t, ValidBot("WhiteElephantIsNotARobot"))
	assert.NoError(t, ValidBot("app[bot]"))
	assert.ErrorContains(t, ValidBot(""), "empty")
	assert.ErrorContains(t, ValidBot("a b"), `' '`)
	assert.ErrorContains(t, ValidBot(strings.Repeat("x", 65)), "longer than 64")
}

// checkInvariants asserts what must hold for any body: offsets in order and
// at an '@' followed by the login, lines matching offsets, flags non-nil
// exactly for !cfg, and a stable result.
func checkInvariants(t testing.TB, body, bot string, ms []Mention) {
	t.Helper()
	login := strings.TrimPrefix(bot, "@")
	prev := -1
	for _, m := range ms {
		require.Greater(t, m.Offset, prev, "offsets increase")
		prev = m.Offset
		require.Less(t, m.Offset, len(body))
		require.Equal(t, byte('@'), body[m.Offset])
		require.True(t, strings.EqualFold(body[m.Offset+1:m.Offset+1+len(login)], login))
		require.True(t, precededOK(body, m.Offset))
		require.True(t, boundaryAt(body, m.Offset+1+len(login)))
		require.Equal(t, 1+strings.Count(body[:m.Offset], "\n"), m.Line)
		require.Equal(t, m.HasCfg, m.Flags != nil)
		if m.HasCfg {
			require.Equal(t, CommandTask, m.Command)
		}
		require.Contains(t, []Command{CommandTask, CommandGoAway, CommandComeBack}, m.Command)
		_ = Task(body, m)
	}
	require.Equal(t, ms, Find(body, bot), "stable")
}

func TestFindRealistic(t *testing.T) {
	ms := Find(realistic, "bot")
	checkInvariants(t, realistic, "bot", ms)
	var got []want
	for _, m := range ms {
		got = append(got, want{cmd: m.Command, line: m.Line, flags: m.Flags})
	}
	assert.Equal(t, []want{task(1), cfg(19, "comment-only", "here-only"), task(20)}, got, "[@bot] is bracketed: dropped")
	assert.Equal(t, "Thanks for the report!", Task(realistic, ms[1])[:22])
}
