package dispatch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// lastEditedQuery asks for the Comment interface's lastEditedAt (issues,
// pull requests, issue comments, reviews and review comments all implement
// it). The REST API has no such field: a review object shows no trace of
// an edit at all, and an issue's updated_at also moves for labels, new
// comments and state changes, so only this tells a real body edit.
const lastEditedQuery = `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Comment { lastEditedAt } } }`

// editTimeout bounds the lookup.
const editTimeout = 30 * time.Second

// lastEdited returns, for each node id GitHub knows, whether its body was
// ever edited. An id missing from the answer (deleted, or not visible) is
// absent from the map.
func lastEdited(ctx context.Context, c *github.Client, nodeIDs []string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, editTimeout)
	defer cancel()
	body := map[string]any{"query": lastEditedQuery, "variables": map[string]any{"ids": nodeIDs}}
	req, err := c.NewRequest("POST", graphQLURL(c), body)
	if err != nil {
		return nil, fmt.Errorf("edit times: %w", err)
	}
	var out struct {
		Data struct {
			Nodes []*struct {
				ID           string     `json:"id"`
				LastEditedAt *time.Time `json:"lastEditedAt"`
			} `json:"nodes"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := c.Do(ctx, req, &out); err != nil {
		return nil, fmt.Errorf("edit times (GraphQL lastEditedAt): %w", err)
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("edit times (GraphQL lastEditedAt): %s", out.Errors[0].Message)
	}
	edited := map[string]bool{}
	for _, n := range out.Data.Nodes {
		if n != nil && n.ID != "" {
			edited[n.ID] = n.LastEditedAt != nil
		}
	}
	return edited, nil
}

// graphQLURL is the GraphQL endpoint next to the client's REST base:
// https://api.github.com/graphql, or https://HOST/api/graphql for GitHub
// Enterprise Server (REST at https://HOST/api/v3/).
func graphQLURL(c *github.Client) string {
	u := *c.BaseURL
	if p, ok := strings.CutSuffix(u.Path, "/api/v3/"); ok {
		u.Path = p + "/api/graphql"
	} else {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/graphql"
	}
	return u.String()
}
