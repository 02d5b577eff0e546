// Package fakemodel is a scriptable fake of the Anthropic Messages API for
// running the real Claude Code CLI offline in tests: point
// ANTHROPIC_BASE_URL at Server.URL() and script the assistant's replies.
//
// Routes: HEAD / → 200 (Claude Code's connectivity probe);
// POST /v1/messages (stream true → SSE, false → JSON);
// POST /v1/messages/count_tokens → a rough estimate; anything else → 404.
// Every request is recorded. Side requests (see Request.IsSide) are
// answered by Server.Side without consuming the script.
package fakemodel

import (
	"fmt"
	"net/http"
	"strings"
)

// maxBody caps a request body; Claude Code sends ~100 KB per turn.
const maxBody = 64 << 20

// Script decides the assistant's replies: a fixed sequence consumed in
// order, or a function of the request.
type Script struct {
	replies []Reply
	fn      func(Request) Reply
}

// Sequence is a script that answers the n-th agent call with replies[n].
func Sequence(replies ...Reply) Script { return Script{replies: replies} }

// Func is a script that computes each reply from the request.
func Func(fn func(Request) Reply) Script { return Script{fn: fn} }

// Server is the fake API. Create with New; serve with Start or Handler.
type Server struct {
	// Side answers side requests; nil means DefaultSide. Set before serving.
	Side func(Request) Reply

	*Player // the script, the request log and the problems
	Loopback
}

// New makes a server that answers with script.
func New(script Script) *Server { return &Server{Player: NewPlayer(script)} }

// Start serves on a loopback port until Close.
func (s *Server) Start() *Server {
	s.Serve(s.Handler())
	return s
}

// AgentRequests returns the messages calls that were not side requests.
func (s *Server) AgentRequests() []Request {
	return s.Where(func(r Request) bool { return r.Path == "/v1/messages" && !r.Side })
}

// Handler serves the fake API, e.g. for httptest.NewServer.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	req, ok := ReadRequest(w, hr)
	if !ok {
		return
	}

	switch {
	case hr.URL.Path == "/" && (hr.Method == http.MethodHead || hr.Method == http.MethodGet):
		s.Record(&req)
		w.WriteHeader(http.StatusOK)
	case hr.URL.Path == "/v1/messages/count_tokens" && hr.Method == http.MethodPost:
		s.Record(&req)
		WriteJSON(w, map[string]int{"input_tokens": len(req.Body)/4 + 1})
	case hr.URL.Path == "/v1/messages" && hr.Method == http.MethodPost:
		s.messages(w, &req)
	default:
		s.Record(&req)
		http.NotFound(w, hr)
	}
}

func (s *Server) messages(w http.ResponseWriter, req *Request) {
	err := req.parseBody()
	req.Side = err == nil && req.IsSide()
	reply := s.Answer(req, err, "invalid_request_error", s.Side, DefaultSide)
	if reply.Error != nil {
		writeError(w, reply.Error)
		return
	}
	id, reply := s.fillIDs(reply)
	model := reply.ModelOr(req.Model)
	if req.Stream {
		writeSSE(w, id, model, reply)
	} else {
		writeJSON(w, id, model, reply)
	}
}

// fillIDs assigns the message id and ids of tool_use blocks that have none.
func (s *Server) fillIDs(r Reply) (string, Reply) {
	n := s.NextID()
	content := make([]Block, len(r.Content))
	for i, b := range r.Content {
		if b.Type == "tool_use" && b.ID == "" {
			b.ID = fmt.Sprintf("toolu_fake_%03d_%d", n, i)
		}
		if b.Type == "thinking" && b.Signature == "" {
			b.Signature = "fakemodel-signature"
		}
		content[i] = b
	}
	r.Content = content
	return fmt.Sprintf("msg_fake_%03d", n), r
}

// DefaultSide answers side requests: a JSON title for structured-output
// calls (Claude Code's session title), a short text otherwise.
func DefaultSide(req Request) Reply {
	if req.Structured && strings.Contains(string(req.Body), `"title"`) {
		return Text(`{"title":"Fake session"}`)
	}
	return Text("ok")
}
