// Package shardstore coordinates the workflow runs of one sharded job
// through git refs in the control repo (SPEC §4). Each run stores its piece
// (blob → tree → commit → refs/mention-runner/jobs/<jobid>/shards/<index>),
// lists the job's refs, and once every index is present tries to create
// refs/mention-runner/jobs/<jobid>/lock. Ref creation is atomic on GitHub,
// so exactly one run wins the lock and reads the pieces back.
//
// With a pusher (Store.Push) each of those writes is one request: a git
// push carrying the piece's blob, tree and commit with the shard ref's
// creation, the lock commit with the lock's, and at the job's end every
// ref's deletion, each update a compare-and-swap. Object ids are computed
// here, so a push whose answer is lost is recognised by reading the ref.
//
// Every shard commit is a root commit (or, replacing a piece of an older
// dispatch of the job, a child of it) whose message names what it holds (job,
// index, total, timestamp, blob sha) and whose date is when it was made, so
// the reader needs two requests per shard and the sweeper can age refs.
// Pieces read back are checked against the commit's tree by recomputing the
// git object ids locally, so a message can never point at other content.
// The payload timestamp in the message tells dispatch attempts apart: a
// newer attempt's piece replaces an older one, and only the newest attempt's
// pieces count towards completion (see Describe, Newest, Select).
package shardstore
