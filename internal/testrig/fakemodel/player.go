package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Player plays a Script and records the requests of one fake provider API:
// this package's Messages API and the sibling fakes of other providers'
// APIs (fakemodel/openai, fakemodel/gemini) share it, so one scripted
// dialogue drives any engine. Safe for concurrent use.
type Player struct {
	mu       sync.Mutex
	script   Script
	next     int // next index into script.replies
	ids      int
	requests []Request
	problems []string
}

// NewPlayer returns a player for script.
func NewPlayer(script Script) *Player { return &Player{script: script} }

// Record appends r to the request log, numbering it (r.Seq).
func (p *Player) Record(r *Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.Seq = len(p.requests) + 1
	p.requests = append(p.requests, *r)
}

// Next consumes the script for one agent call. An exhausted sequence ends
// the turn with a text saying so (and records a problem) rather than
// hanging the client.
func (p *Player) Next(req Request) Reply {
	p.mu.Lock()
	fn := p.script.fn
	if fn == nil {
		defer p.mu.Unlock()
		if p.next >= len(p.script.replies) {
			p.problems = append(p.problems, fmt.Sprintf(
				"request %d: script exhausted after %d replies", req.Seq, len(p.script.replies)))
			return Text("fakemodel: script exhausted")
		}
		r := p.script.replies[p.next]
		p.next++
		return r
	}
	p.mu.Unlock()
	return fn(req) // outside the lock: fn may call Requests()
}

// Answer records req and picks its reply, the same way for every fake
// API: a body that did not parse (parseErr) is a problem and gets a 400 of
// type badType; a side request gets the first non-nil of sides; any other
// call takes the script's next reply.
func (p *Player) Answer(req *Request, parseErr error, badType string, sides ...func(Request) Reply) Reply {
	if parseErr != nil {
		req.ParseError = parseErr.Error()
		p.Record(req)
		p.Problem("request %d: bad JSON body: %s", req.Seq, req.ParseError)
		return Reply{Error: &APIError{Status: http.StatusBadRequest, Type: badType, Message: req.ParseError}}
	}
	p.Record(req)
	if req.Side {
		for _, side := range sides {
			if side != nil {
				return side(*req)
			}
		}
	}
	return p.Next(*req)
}

// Where returns the recorded requests keep accepts, in order (e.g. a fake
// API's agent calls).
func (p *Player) Where(keep func(Request) bool) []Request {
	var out []Request
	for _, r := range p.Requests() {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// WriteError answers with e in a provider's error shape: body builds it
// from the HTTP status (outside 400…599 → 500) and the error type (""
// → defaultType).
func WriteError(w http.ResponseWriter, e *APIError, defaultType string, body func(status int, typ string) any) {
	status := e.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	typ := e.Type
	if typ == "" {
		typ = defaultType
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body(status, typ))
}

// WriteJSON answers 200 with v as JSON.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// NextID numbers the server's replies (message and tool call ids): 1, 2, 3…
func (p *Player) NextID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids++
	return p.ids
}

// Problem records something that went wrong on the server side.
func (p *Player) Problem(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, fmt.Sprintf(format, a...))
}

// Requests returns a copy of every request received, in order.
func (p *Player) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// Problems lists what went wrong on the server side: an exhausted script,
// unparsable bodies. A passing test expects none.
func (p *Player) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.problems...)
}

// Remaining is how many scripted replies were not used.
func (p *Player) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.script.replies) - p.next
}

// Loopback serves a fake API's handler on a loopback port; the fake
// servers embed it for URL and Close.
type Loopback struct{ ts *httptest.Server }

// Serve starts serving h until Close.
func (l *Loopback) Serve(h http.Handler) { l.ts = httptest.NewServer(h) }

// URL is the server's base URL (empty before Serve).
func (l *Loopback) URL() string {
	if l.ts == nil {
		return ""
	}
	return l.ts.URL
}

// Close stops a started server.
func (l *Loopback) Close() {
	if l.ts != nil {
		l.ts.Close()
	}
}

// ReadRequest reads hr into a Request (body capped at maxBody); on a read
// error it answers 400 and returns false.
func ReadRequest(w http.ResponseWriter, hr *http.Request) (Request, bool) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return Request{}, false
	}
	return Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body}, true
}
