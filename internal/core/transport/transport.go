// Package transport is the wire format between dispatcher and runner: a
// context JSON object carried in repository_dispatch request bodies, either in
// one agent_small event or cut into agent_shard pieces (SPEC §4). It encodes a
// context into request bodies, parses bodies or webhook events, and
// reassembles shards with every check the spec asks for.
package transport

import (
	"github.com/google/uuid"
)

// DefaultMaxContextBytes is the default cap on the decoded context size.
const DefaultMaxContextBytes = 8 << 20

// JobNamespace is the UUIDv5 namespace of job ids. It is itself
// UUIDv5(NameSpaceURL, "https://github.com/mention-runner/mention-runner/jobid"),
// fixed forever: changing it would give old mentions new job ids.
var JobNamespace = uuid.MustParse("d2804c57-ae52-5c75-ada3-f639863ba2fb")

// JobID derives the job id of a mention from the trigger comment's GraphQL
// node id, so the same mention always yields the same job.
func JobID(triggerNodeID string) string {
	return uuid.NewSHA1(JobNamespace, []byte(triggerNodeID)).String()
}

// Shard places one agent_shard piece in its job.
type Shard struct {
	Index int `json:"index"`
	Total int `json:"total"`
}

// Payload is the client_payload of both event types; Shard is nil for
// agent_small.
type Payload struct {
	JobID      string `json:"jobid"`
	Shard      *Shard `json:"shard,omitempty"`
	ContextB64 string `json:"context_b64"`
	Timestamp  string `json:"timestamp"`
}

// Request is the body of POST /repos/{owner}/{repo}/dispatches.
type Request struct {
	EventType     string  `json:"event_type"`
	ClientPayload Payload `json:"client_payload"`
}
