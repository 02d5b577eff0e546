package policy

import (
	"fmt"
	"strings"
)

// Words is the effective policy in plain English sentences, one per line,
// for the agent's prompt and the run-log issue.
func (p Policy) Words() string {
	var s []string
	switch {
	case p.HereOnly:
		s = append(s, fmt.Sprintf("Only comments (or a review of the pull request) may be written, and only on %s; no issues or pull requests may be created and no labels changed.", p.hereName()))
	case p.CommentOnly:
		s = append(s, "Only comments and reviews may be written; no issues or pull requests may be created, no labels changed and nothing may be pushed.")
	}
	switch len(p.AllowRepos) {
	case 0:
	case 1:
		s = append(s, "Writes are allowed only to "+p.AllowRepos[0]+".")
	default:
		s = append(s, "Writes are allowed only to these repositories: "+strings.Join(p.AllowRepos, ", ")+".")
	}
	if len(p.DenyRepos) > 0 {
		s = append(s, "Writes to "+strings.Join(p.DenyRepos, ", ")+" are never allowed.")
	}
	if p.Blocker != nil {
		s = append(s, "Repositories whose owners opted out of the bot are always denied.")
	}
	if !p.CommentOnly {
		s = append(s, creationSentence(KindIssue, p.IssueLimit), creationSentence(KindPullRequest, p.PRLimit))
	}
	if p.CommentLimit == 0 {
		s = append(s, "No comments may be written.")
	} else {
		s = append(s, fmt.Sprintf("At most %s may be written on any one issue or pull request.", KindComment.count(p.CommentLimit)))
	}
	if p.CommentLimit > 0 {
		s = append(s, fmt.Sprintf("A review counts as one comment on its pull request and may have at most %d inline comments.", p.ReviewComments))
	}
	if !p.CommentOnly {
		if p.LabelLimit == 0 {
			s = append(s, "No labels may be changed.")
		} else {
			s = append(s, fmt.Sprintf("At most %d label changes may be made in this run, only with labels the repository has.", p.LabelLimit))
		}
	}
	s = append(s, fmt.Sprintf("At most %d writes (comments, reviews, issues, pull requests and label changes together) may be made in this run.", p.MaxWrites))
	if p.ControlRepo != "" {
		s = append(s, "Nothing may be written to "+p.ControlRepo+", the control repository.")
	}
	s = append(s, "Any write outside these rules is denied.")
	return strings.Join(s, "\n")
}

func creationSentence(k Kind, limit int) string {
	if limit == 0 {
		return fmt.Sprintf("No %s may be created.", k.plural())
	}
	return fmt.Sprintf("At most %s may be created in this run.", k.count(limit))
}

// Flags is the effective policy as the !cfg flags that would produce it
// (Flags.String's form); the run-log issue shows it. Every limit is spelled
// out, so a reader sees the operator's ceilings too.
func (p Policy) Flags() string {
	issues, prs, comments := p.IssueLimit, p.PRLimit, p.CommentLimit
	return Flags{
		HereOnly: p.HereOnly, CommentOnly: p.CommentOnly && !p.HereOnly, // here-only implies comment-only
		AllowRepos: p.AllowRepos, DenyRepos: p.DenyRepos,
		IssueLimit: &issues, PRLimit: &prs, CommentLimit: &comments,
	}.String()
}
