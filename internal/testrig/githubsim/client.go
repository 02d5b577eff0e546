package githubsim

import (
	"net/url"

	"github.com/google/go-github/v62/github"
)

// Client is a go-github client that talks to the started simulator with
// token (empty: anonymous), so tests need not repeat the wiring.
func (s *Sim) Client(token string) *github.Client {
	c := github.NewClient(nil)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	if u, err := url.Parse(s.URL()); err == nil {
		c.BaseURL = u
	}
	return c
}
