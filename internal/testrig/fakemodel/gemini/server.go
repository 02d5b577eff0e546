// Package gemini is a scriptable fake of the Gemini API (generativelanguage
// v1beta) for running the real Gemini CLI offline in tests: point
// GOOGLE_GEMINI_BASE_URL at Server.URL() and script the replies with the
// same fakemodel.Script that drives the fake Messages API.
//
// Routes: POST /v1beta/models/<model>:streamGenerateContent (SSE with
// alt=sse) and :generateContent (JSON); POST …:countTokens → an estimate;
// anything else → 404. Every request is recorded, its body parsed into a
// fakemodel.Request (contents become user/assistant messages with text,
// tool_use and tool_result blocks) so scripts are written once for every
// provider. Calls that ask for JSON output (responseMimeType
// application/json: the CLI's routing and next-speaker checks) are side
// requests, answered by Server.Side without consuming the script.
package gemini

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
)

// Server is the fake API. Create with New; serve with Start or Handler.
type Server struct {
	// Side answers side requests; nil means DefaultSide. Set before serving.
	Side func(fakemodel.Request) fakemodel.Reply

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

// AgentRequests returns the generate calls that were not side requests.
func (s *Server) AgentRequests() []fakemodel.Request {
	return s.Where(func(r fakemodel.Request) bool {
		return strings.Contains(r.Path, "enerateContent") && !r.Side && r.ParseError == ""
	})
}

// Handler serves the fake API.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	req, ok := fakemodel.ReadRequest(w, hr)
	if !ok {
		return
	}
	model, method, ok := strings.Cut(strings.TrimPrefix(hr.URL.Path, "/v1beta/models/"), ":")
	if !ok || hr.Method != http.MethodPost || !strings.HasPrefix(hr.URL.Path, "/v1beta/models/") {
		s.Record(&req)
		http.NotFound(w, hr)
		return
	}
	switch method {
	case "streamGenerateContent", "generateContent":
		req.Model, req.Stream = model, method == "streamGenerateContent"
		s.generate(w, &req)
	case "countTokens":
		s.Record(&req)
		fakemodel.WriteJSON(w, map[string]int{"totalTokens": len(req.Body)/4 + 1})
	default:
		s.Record(&req)
		http.NotFound(w, hr)
	}
}

func (s *Server) generate(w http.ResponseWriter, req *fakemodel.Request) {
	reply := s.Answer(req, parseRequest(req), "INVALID_ARGUMENT", s.Side, DefaultSide)
	if reply.Error != nil {
		writeError(w, reply.Error)
		return
	}
	resp := response(s.NextID(), reply.ModelOr(req.Model), reply)
	if !req.Stream {
		fakemodel.WriteJSON(w, resp)
		return
	}
	writeSSE(w, resp)
}

// DefaultSide answers the CLI's JSON side requests: the next-speaker check
// says the user speaks next (the turn is over), anything else gets {}.
func DefaultSide(req fakemodel.Request) fakemodel.Reply {
	if strings.Contains(string(req.Body), "next_speaker") {
		return fakemodel.Text(`{"reasoning":"fake","next_speaker":"user"}`)
	}
	return fakemodel.Text(`{}`)
}

// writeError answers with the Google API error shape.
func writeError(w http.ResponseWriter, e *fakemodel.APIError) {
	fakemodel.WriteError(w, e, "INTERNAL", func(status int, typ string) any {
		return map[string]any{"error": map[string]any{"code": status, "message": e.Message, "status": typ}}
	})
}

// writeSSE streams resp as one SSE data event per part (text first, so a
// client sees streaming), the last carrying finishReason and usage.
func writeSSE(w http.ResponseWriter, resp map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	b, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if fl != nil {
		fl.Flush()
	}
}
