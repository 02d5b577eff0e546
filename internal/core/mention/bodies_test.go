package mention

import "strings"

// realistic is a GitHub-comment-like page of markdown: prose, lists, code,
// quotes, comments and a few mentions.
const realistic = "Thanks for the report! I looked into this with @alice and cc @bot.\r\n" +
	"\n" +
	"Steps to reproduce:\n" +
	"1. Run `make test` on a clean checkout (see [docs](https://example.com/@bot)).\n" +
	"2. Open the log and search for `@bot !cfg`.\n" +
	"   - nested item with e-mail me@bot.com\n" +
	"\n" +
	"```go\n" +
	"func main() { fmt.Println(\"@bot go away\") }\n" +
	"```\n" +
	"\n" +
	"> @bot said earlier: this is fine\n" +
	"> quoted ``code `` here\n" +
	"\n" +
	"<!-- hidden: @bot please ignore -->\n" +
	"    indented code @bot\n" +
	"\n" +
	"### Plan\n" +
	"@bot !cfg comment-only here-only\n" +
	"Please summarise the thread, (@bot) and [@bot] are fine, @bot-fan is not.\n" +
	"\n"

// bodies builds bodies of about n bytes, realistic and adversarial.
var bodies = []struct {
	name string
	make func(n int) string
}{
	{"realistic", func(n int) string { return fill(realistic, n) }},
	{"backticks", func(n int) string { return strings.Repeat("`", n) }},
	{"backtick-pairs", func(n int) string { return fill("` @bot ", n) }},
	{"backtick-ladder", backtickLadder},
	{"comment-opens", func(n int) string { return fill("<!--", n) }},
	{"comment-closed", func(n int) string { return fill("a <!-- @bot --> b\n", n) }},
	{"comment-near-miss", func(n int) string { return fill("<!- <! -- <-- ", n) }},
	{"mentions", func(n int) string { return fill("@bot ", n) }},
	{"mention-lines", func(n int) string { return fill("@bot go away\n", n) }},
	{"cfg-one-line", func(n int) string { return fill("@bot !cfg ", n) }},
	{"cfg-lines", func(n int) string { return fill("@bot !cfg no-pr\n", n) }},
	{"emails", func(n int) string { return fill("x@bot", n) }},
	{"quotes-deep", func(n int) string { return fill(">", n-5) + "@bot\n" }},
	{"quote-lines", func(n int) string { return fill("> @bot\n", n) }},
	{"lists-deep", func(n int) string { return fill("- ", n-5) + "@bot\n" }},
	{"lists-indented", listsIndented},
	{"lists-break", func(n int) string { return fill("- ", n) }},
	{"lists-alternating", func(n int) string { return fill("- * ", n-5) + "_\n@bot" }},
	{"fences", func(n int) string { return fill("```\n@bot\n", n) }},
	{"fence-unclosed", func(n int) string { return "~~~\n" + fill("@bot ~~ ``\n", n-4) }},
	{"escapes", func(n int) string { return fill("\\`\\<!--\\@bot ", n) }},
	{"crlf-blank", func(n int) string { return fill("\r\n", n) }},
	{"newlines", func(n int) string { return fill("\n", n) }},
	{"tabs-indent", func(n int) string { return fill("\t", n-5) + "@bot\n" }},
}

// fill repeats unit to about n bytes.
func fill(unit string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// backtickLadder is runs of 1, 2, 3 … backticks that never match: a naive
// closer search rescans the rest for each run.
func backtickLadder(n int) string {
	var b strings.Builder
	for k := 1; b.Len() < n; k++ {
		b.WriteString(strings.Repeat("`", k))
		b.WriteString(" @bot ")
	}
	return b.String()[:n]
}

// listsIndented nests list items ever deeper, line after line.
func listsIndented(n int) string {
	var b strings.Builder
	for k := 0; b.Len() < n; k = (k + 1) % 40 {
		b.WriteString(strings.Repeat("  ", k))
		b.WriteString("- @bot\n")
	}
	return b.String()[:n]
}
