package ghclient

import (
	"net/http"

	"github.com/google/go-github/v62/github"
)

// New returns a go-github client whose requests go through NewTransport,
// with BaseURL and UploadURL set from o. It is the only way the project
// should build one.
func New(o Options) (*github.Client, error) {
	base, upload, err := o.withDefaults().urls()
	if err != nil {
		return nil, err
	}
	// o as given: NewTransport applies the defaults itself
	c := github.NewClient(&http.Client{Transport: NewTransport(o, o.Base)})
	c.BaseURL = base
	c.UploadURL = upload
	if o.UserAgent != "" {
		c.UserAgent = o.UserAgent
	}
	return c, nil
}
