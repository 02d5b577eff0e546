// Package openai is a scriptable fake of the OpenAI Responses API for
// running the real Codex CLI offline in tests: configure a model provider
// whose base_url is Server.URL()+"/v1" and script the replies with the
// same fakemodel.Script that drives the fake Messages API.
//
// Routes: POST /v1/responses (stream true → SSE, false → JSON); GET
// /v1/models → an empty list; anything else → 404. Every request is
// recorded, its body parsed into a fakemodel.Request (input items become
// user/assistant messages with text, tool_use and tool_result blocks) so
// scripts are written once for every provider. A script reaches tools
// Codex defers (its MCP tools, for catalog models like gpt-5.5) the way a
// model does: by calling "tool_search", played as the hosted tool's
// tool_search_call; the tools Codex returns are offered from then on.
package openai

import (
	"fmt"
	"io"
	"net/http"

	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
)

// Server is the fake API. Create with New; serve with Start or Handler.
type Server struct {
	*fakemodel.Player
	fakemodel.Loopback
}

// New makes a server that answers with script.
func New(script fakemodel.Script) *Server { return &Server{Player: fakemodel.NewPlayer(script)} }

// Start serves on a loopback port until Close.
func (s *Server) Start() *Server {
	s.Serve(s.Handler())
	return s
}

// AgentRequests returns the responses calls, in order.
func (s *Server) AgentRequests() []fakemodel.Request {
	return s.Where(func(r fakemodel.Request) bool { return r.Path == "/v1/responses" && r.ParseError == "" })
}

// Handler serves the fake API.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	req, ok := fakemodel.ReadRequest(w, hr)
	if !ok {
		return
	}
	switch {
	case hr.URL.Path == "/v1/responses" && hr.Method == http.MethodPost:
		s.responses(w, &req)
	case hr.URL.Path == "/v1/models" && hr.Method == http.MethodGet:
		s.Record(&req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[]}`)
	default:
		s.Record(&req)
		http.NotFound(w, hr)
	}
}

func (s *Server) responses(w http.ResponseWriter, req *fakemodel.Request) {
	reply := s.Answer(req, parseRequest(req), "invalid_request_error")
	if reply.Error != nil {
		writeError(w, reply.Error)
		return
	}
	resp := response(s.NextID(), reply.ModelOr(req.Model), reply, toolKinds(req.Body))
	if !req.Stream {
		fakemodel.WriteJSON(w, resp)
		return
	}
	writeSSE(w, resp)
}

// writeError answers with the OpenAI error shape.
func writeError(w http.ResponseWriter, e *fakemodel.APIError) {
	fakemodel.WriteError(w, e, "server_error", func(_ int, typ string) any {
		return map[string]any{"error": map[string]any{"message": e.Message, "type": typ, "code": nil, "param": nil}}
	})
}

// toolCallID is the call_id of the i-th tool call of reply n.
func toolCallID(n, i int) string { return fmt.Sprintf("call_fake_%03d_%d", n, i) }
