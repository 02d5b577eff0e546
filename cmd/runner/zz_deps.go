package main

import (
	_ "github.com/google/go-github/v62/github"
	_ "github.com/google/uuid"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/sethvargo/go-githubactions"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/require"
	_ "golang.org/x/oauth2"
)
