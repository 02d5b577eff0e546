package policy

import "strings"

// RepoIDs are GitHub's numeric ids of a repository and of its owner (0 =
// unknown). Names change hands (a renamed or transferred repository, a freed
// login re-registered); ids never do, so blocks and deny= follow the ids.
type RepoIDs struct {
	Repo  int64 `json:"repo,omitempty"`
	Owner int64 `json:"owner,omitempty"`
}

// IDs maps lower-cased "owner/name" to the ids a trusted job resolved for
// it (the thread's repository from the context; publish asks the API for
// every repository it is about to write to and for every deny= entry).
type IDs map[string]RepoIDs

// Of returns the ids known for repo (zero when none).
func (m IDs) Of(repo string) RepoIDs { return m[strings.ToLower(repo)] }

// Set records ids for repo; zero ids are not recorded.
func (m IDs) Set(repo string, ids RepoIDs) {
	if ids != (RepoIDs{}) {
		m[strings.ToLower(repo)] = ids
	}
}

// denied reports the deny= entry naming the same repository as ids, by id:
// deny=old/name still denies the repository after its rename.
func (p Policy) deniedID(ids RepoIDs) (string, bool) {
	if ids.Repo == 0 {
		return "", false
	}
	for _, d := range p.DenyRepos {
		if p.IDs.Of(d).Repo == ids.Repo {
			return d, true
		}
	}
	return "", false
}
