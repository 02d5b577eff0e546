package githubsim

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Seeding helpers act without auth, rate limits or request logging.

// AddUser adds a user account (idempotent) and returns it.
func (s *Sim) AddUser(login string) *User { return s.addAccount(login, "User") }

// AddOrg adds an organization; admins become members with role admin.
func (s *Sim) AddOrg(login string, admins ...string) *User {
	u := s.addAccount(login, "Organization")
	for _, a := range admins {
		s.AddOrgMember(login, a, "admin")
	}
	return u
}

func (s *Sim) addAccount(login, kind string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.users[lower(login)]; u != nil {
		return u
	}
	id := s.newIDLocked()
	prefix := "U"
	if kind == "Organization" {
		prefix = "O"
	}
	u := &User{ID: id, Login: login, Kind: kind, NodeID: nodeID(prefix, id), CreatedAt: s.now().UTC()}
	s.users[lower(login)] = u
	return u
}

// AddOrgMember adds login (created if needed) to org with role "admin" or "member".
func (s *Sim) AddOrgMember(org, login, role string) {
	s.AddUser(login)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.members[lower(org)]
	if m == nil {
		m = map[string]string{}
		s.members[lower(org)] = m
	}
	if role != "admin" {
		role = "member"
	}
	m[lower(login)] = role
}

// AddToken maps a token to a user.
func (s *Sim) AddToken(token, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = &tokenInfo{login: login, notifications: true}
}

// SetTokenCanReadNotifications models a token without the notifications
// scope: GET /notifications answers 403.
func (s *Sim) SetTokenCanReadNotifications(token string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ti := s.tokens[token]; ti != nil {
		ti.notifications = ok
	}
}

// SetTokenScopes makes token a classic token with these OAuth scopes:
// responses carry X-OAuth-Scopes, and GET /notifications needs the
// notifications or repo scope, as on GitHub.
func (s *Sim) SetTokenScopes(token string, scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ti := s.tokens[token]; ti != nil {
		ti.scopes = append([]string{}, scopes...)
		ti.notifications = slices.Contains(scopes, "notifications") || slices.Contains(scopes, "repo")
	}
}

// AddRepoRedirect makes the old name from answer with a redirect to the
// existing repository to, as GitHub does after renaming or transferring it
// (the repository keeps its id).
func (s *Sim) AddRepoRedirect(from, to string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repos[lower(to)] == nil {
		return fmt.Errorf("githubsim: redirect to %q: no such repository", to)
	}
	if s.repos[lower(from)] != nil {
		return fmt.Errorf("githubsim: redirect from %q: the name is taken", from)
	}
	if s.redirects == nil {
		s.redirects = map[string]string{}
	}
	s.redirects[lower(from)] = s.repos[lower(to)].meta.FullName
	return nil
}

// AddRepo creates owner/name with a bare git repository holding one commit
// (README.md) on "main". The owner must exist.
func (s *Sim) AddRepo(fullName string, private bool) (*Repo, error) {
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("githubsim: repo %q: want owner/name", fullName)
	}
	return s.addRepo(owner, name, private, "", "# "+name+"\n")
}

func (s *Sim) addRepo(owner, name string, private bool, parent, readme string) (*Repo, error) {
	s.mu.Lock()
	o := s.users[lower(owner)]
	if o == nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("githubsim: repo %s/%s: owner %q does not exist", owner, name, owner)
	}
	full := o.Login + "/" + name
	if s.repos[lower(full)] != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("githubsim: repo %s already exists", full)
	}
	id := s.newIDLocked()
	meta := &Repo{ID: id, NodeID: nodeID("R", id), Owner: o.Login, Name: name, FullName: full, Private: private,
		DefaultBranch: "main", Fork: parent != "", Parent: parent, CreatedAt: s.now().UTC()}
	var src *repoState
	if parent != "" {
		src = s.repos[lower(parent)]
	}
	var srcGit *gitStore
	if src != nil {
		srcGit = src.git
	}
	rs := &repoState{meta: meta, perms: map[string]string{}, labels: map[string]*label{}, issues: map[int]*issue{},
		nextNumber: 1, git: newGitStore(s, filepath.Join(s.gitDir, o.Login, name+".git"), meta.DefaultBranch, srcGit)}
	s.repos[lower(full)] = rs
	if src != nil {
		src.forks = append(src.forks, full)
	}
	s.mu.Unlock()

	if src != nil {
		// A fork starts with its parent's branches and tags; objects are
		// shared through the network.
		for _, r := range src.git.listRefs(context.Background(), "refs/") {
			if strings.HasPrefix(r.name, "refs/heads/") || strings.HasPrefix(r.name, "refs/tags/") {
				rs.git.setRef(r.name, r.sha)
			}
		}
	} else {
		s.initRepo(rs.git, meta.DefaultBranch, readme, o.Login)
	}
	return meta, nil
}

// SetPermission grants login a permission on repo: "admin", "maintain",
// "write", "triage", "read" or "none".
func (s *Sim) SetPermission(repo, login, perm string) {
	s.AddUser(login)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[lower(repo)]; r != nil {
		if _, ok := permRank[perm]; !ok {
			perm = "none" // unknown names never widen access
		}
		r.perms[lower(login)] = perm
	}
}

// CreateIssue opens an issue as author (mentions notify as through the API).
func (s *Sim) CreateIssue(repo, author, title, body string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil {
		return 0, fmt.Errorf("githubsim: create issue: repo %s does not exist", repo)
	}
	if err := checkBody(body); err != nil {
		return 0, fmt.Errorf("githubsim: create issue: %w", err)
	}
	return s.addIssueLocked(r, author, title, body, nil, nil).number, nil
}

// CreatePR opens a pull request as author. A head branch missing from git is
// created at the base branch's tip; diff, when not empty, is served as the
// PR's diff instead of one computed by git.
func (s *Sim) CreatePR(repo, author, title, body, head, base string, diff string) (int, error) {
	s.mu.Lock()
	r := s.repos[lower(repo)]
	s.mu.Unlock()
	if r == nil {
		return 0, fmt.Errorf("githubsim: create PR: repo %s does not exist", repo)
	}
	if err := checkBody(body); err != nil {
		return 0, fmt.Errorf("githubsim: create PR: %w", err)
	}
	ctx := context.Background()
	baseSHA := r.git.resolveRef(ctx, "refs/heads/"+base)
	if baseSHA == "" {
		return 0, fmt.Errorf("githubsim: create PR: base branch %q does not exist in %s", base, repo)
	}
	headSHA := r.git.resolveRef(ctx, "refs/heads/"+head)
	if headSHA == "" {
		if err := r.git.createRef("refs/heads/"+head, baseSHA); err != nil {
			return 0, fmt.Errorf("githubsim: create PR head %q: %w", head, err)
		}
		headSHA = baseSHA
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &pull{headRepo: r.meta.FullName, headRef: head, headSHA: headSHA, baseRef: base, baseSHA: baseSHA, diff: diff}
	is := s.addIssueLocked(r, author, title, body, nil, p)
	return is.number, nil
}

// Comment adds an issue or PR comment as author, notifying mentioned users.
func (s *Sim) Comment(repo string, number int, author, body string) (*github.IssueComment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cms, r, err := s.addCommentsLocked(repo, number, author, []string{body})
	if err != nil {
		return nil, err
	}
	return toIssueComment(s.commentLocked(s.baseLocked(), r, cms[0])), nil
}

// AddComments posts bodies in order, as Comment does, without building
// each one's API view: load-sized threads are seeded in one call.
func (s *Sim) AddComments(repo string, number int, author string, bodies ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, err := s.addCommentsLocked(repo, number, author, bodies)
	return err
}

func (s *Sim) addCommentsLocked(repo string, number int, author string, bodies []string) ([]*comment, *repoState, error) {
	r := s.repos[lower(repo)]
	if r == nil {
		return nil, nil, fmt.Errorf("githubsim: comment: repo %s does not exist", repo)
	}
	is := r.issues[number]
	if is == nil {
		return nil, nil, fmt.Errorf("githubsim: comment: %s#%d does not exist", repo, number)
	}
	for _, body := range bodies {
		if err := checkBody(body); err != nil {
			return nil, nil, fmt.Errorf("githubsim: comment: %w", err)
		}
	}
	cms := make([]*comment, len(bodies))
	for i, body := range bodies {
		cms[i] = s.addCommentLocked(r, is, author, body)
	}
	return cms, r, nil
}

// AddReview adds a submitted pull request review (state "APPROVED",
// "CHANGES_REQUESTED" or "COMMENTED") and returns its id.
func (s *Sim) AddReview(repo string, number int, author, state, body string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.pullLocked(repo, number)
	if err != nil {
		return 0, err
	}
	rv := &review{id: s.newIDLocked(), author: author, state: state, body: body, commitID: is.pull.headSHA, submitted: s.now().UTC()}
	is.pull.reviews = append(is.pull.reviews, rv)
	is.updated = rv.submitted
	return rv.id, nil
}

// AddReviewComment adds a review comment on path:line (reviewID may be 0).
func (s *Sim) AddReviewComment(repo string, number int, reviewID int64, author, path string, line int, body string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.pullLocked(repo, number)
	if err != nil {
		return 0, err
	}
	rc := &reviewComment{id: s.newIDLocked(), reviewID: reviewID, author: author, path: path, line: line, body: body,
		diffHunk: fmt.Sprintf("@@ -%d,1 +%d,1 @@", line, line), commitID: is.pull.headSHA, created: s.now().UTC()}
	is.pull.rcomms = append(is.pull.rcomms, rc)
	is.updated = rc.created
	return rc.id, nil
}

func (s *Sim) pullLocked(repo string, number int) (*issue, error) {
	r := s.repos[lower(repo)]
	if r == nil {
		return nil, fmt.Errorf("githubsim: repo %s does not exist", repo)
	}
	is := r.issues[number]
	if is == nil || is.pull == nil {
		return nil, fmt.Errorf("githubsim: %s#%d is not a pull request", repo, number)
	}
	return is, nil
}

// addIssueLocked creates an issue (or the issue half of a PR) and notifies.
func (s *Sim) addIssueLocked(r *repoState, author, title, body string, labels []string, p *pull) *issue {
	now := s.now().UTC()
	is := &issue{id: s.newIDLocked(), number: r.nextNumber, title: title, body: body, author: author, state: "open",
		labels: labels, created: now, updated: now, pull: p}
	if p != nil {
		p.id = s.newIDLocked()
	}
	r.nextNumber++
	r.issues[is.number] = is
	s.notifyMentionsLocked(r, is, author, body, s.issueAPIPath(r, is), now)
	return is
}

func (s *Sim) addCommentLocked(r *repoState, is *issue, author, body string) *comment {
	now := s.now().UTC()
	cm := &comment{id: s.newIDLocked(), repo: lower(r.meta.FullName), number: is.number, author: author, body: body, created: now, updated: now}
	s.comments[cm.id] = cm
	is.comments = append(is.comments, cm.id)
	is.updated = now
	s.notifyMentionsLocked(r, is, author, body, fmt.Sprintf("repos/%s/issues/comments/%d", r.meta.FullName, cm.id), now)
	return cm
}

func (s *Sim) issueAPIPath(r *repoState, is *issue) string {
	kind := "issues"
	if is.pull != nil {
		kind = "pulls"
	}
	return fmt.Sprintf("repos/%s/%s/%d", r.meta.FullName, kind, is.number)
}

// ProtectBranch gives repo's branch a protection rule that refuses every
// push through the API, as one requiring reviews or status checks does.
func (s *Sim) ProtectBranch(repo, branch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[lower(repo)]; r != nil {
		if r.protected == nil {
			r.protected = map[string]bool{}
		}
		r.protected["refs/heads/"+branch] = true
	}
}

func (s *Sim) isProtected(repo, ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	return r != nil && r.protected[ref]
}

// CreateForkPR opens a pull request on repo from headRepo's branch head
// (which must exist there), allowing maintainer edits or not.
func (s *Sim) CreateForkPR(repo, headRepo, author, title, head, base string, maintainerCanModify bool) (int, error) {
	s.mu.Lock()
	r, hr := s.repos[lower(repo)], s.repos[lower(headRepo)]
	s.mu.Unlock()
	if r == nil || hr == nil {
		return 0, fmt.Errorf("githubsim: create fork PR: %s or %s does not exist", repo, headRepo)
	}
	ctx := context.Background()
	baseSHA := r.git.resolveRef(ctx, "refs/heads/"+base)
	headSHA := hr.git.resolveRef(ctx, "refs/heads/"+head)
	if baseSHA == "" || headSHA == "" {
		return 0, fmt.Errorf("githubsim: create fork PR: %s:%s or %s:%s does not exist", repo, base, headRepo, head)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &pull{headRepo: hr.meta.FullName, headRef: head, headSHA: headSHA, baseRef: base, baseSHA: baseSHA, maintainerCanModify: maintainerCanModify}
	is := s.addIssueLocked(r, author, title, "", nil, p)
	return is.number, nil
}
