package githubsim

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// maxLsRefsRequest bounds the ls-refs request bodies answered in process
// (a client's few capability and argument lines); bigger ones go to git.
const maxLsRefsRequest = 16 << 10

// maxLsRefsPrefixes: git stops using ref-prefix filters past 65 of them;
// requests with more than this many go to git, so that rule stays git's.
const maxLsRefsPrefixes = 16

// lsRefsRequest is a parsed protocol v2 ls-refs command.
type lsRefsRequest struct {
	symrefs, peel, unborn bool
	prefixes              []string
}

// v2UploadPackPost says whether r is a protocol v2 upload-pack command
// (POST git-upload-pack, Git-Protocol version=2) small enough to read.
func v2UploadPackPost(r *http.Request, rest string) bool {
	return r.Method == http.MethodPost && rest == "git-upload-pack" &&
		slices.Contains(strings.Split(r.Header.Get("Git-Protocol"), ":"), "version=2") &&
		r.Header.Get("Content-Type") == "application/x-git-upload-pack-request" &&
		r.Header.Get("Content-Encoding") == "" &&
		r.ContentLength > 0 && r.ContentLength <= maxLsRefsRequest
}

// parseLsRefs reads body as one v2 ls-refs command: "command=ls-refs",
// capability lines (agent, object-format=sha1), a delimiter, the
// arguments git knows (symrefs, peel, unborn, ref-prefix) and a flush, and
// nothing after. Anything else (another command, an unknown capability or
// argument, a malformed packet) is not ok: git answers it.
func parseLsRefs(body []byte) (lsRefsRequest, bool) {
	var req lsRefsRequest
	section := 0 // 0 command, 1 capabilities, 2 arguments
	for len(body) >= 4 {
		n, err := strconv.ParseUint(string(body[:4]), 16, 16)
		if err != nil {
			return req, false
		}
		switch {
		case n == 0: // flush: the end of the command
			if section != 2 || len(body) != 4 {
				return req, false
			}
			return req, true
		case n == 1: // delimiter: the arguments follow
			if section != 1 {
				return req, false
			}
			section = 2
			body = body[4:]
			continue
		case n < 5 || int(n) > len(body):
			return req, false
		}
		line := strings.TrimSuffix(string(body[4:n]), "\n")
		body = body[n:]
		switch section {
		case 0:
			if line != "command=ls-refs" {
				return req, false
			}
			section = 1
		case 1:
			if !strings.HasPrefix(line, "agent=") && line != "object-format=sha1" {
				return req, false
			}
		case 2:
			switch {
			case line == "symrefs":
				req.symrefs = true
			case line == "peel":
				req.peel = true
			case line == "unborn":
				req.unborn = true
			case strings.HasPrefix(line, "ref-prefix "):
				req.prefixes = append(req.prefixes, strings.TrimPrefix(line, "ref-prefix "))
				if len(req.prefixes) > maxLsRefsPrefixes {
					return req, false
				}
			default:
				return req, false
			}
		}
	}
	return req, false
}

// lsRefs answers req from the refs in memory, line for line what git
// upload-pack answers for the bare repository sync just wrote (HEAD first,
// then the refs in byte order, symref-target, peeled, unborn HEAD). It is
// not ok when a ref's object is not in memory (a push brought it): git
// answers then, as it alone knows the object's type or whether it exists.
func (g *gitStore) lsRefs(req lsRefsRequest) ([]byte, bool) {
	match := func(name string) bool {
		if len(req.prefixes) == 0 {
			return true
		}
		for _, p := range req.prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	g.mu.Lock()
	names := make([]string, 0, len(g.refs))
	for name := range g.refs {
		if match(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	shas := make([]string, len(names))
	for i, name := range names {
		shas[i] = g.refs[name]
	}
	head := "refs/heads/" + g.branch
	headSHA, headBorn := g.refs[head]
	g.mu.Unlock()

	var out bytes.Buffer
	line := func(s string) {
		fmt.Fprintf(&out, "%04x%s", len(s)+4, s)
	}
	// peeled returns " peeled:<commit>" for a tag; ok is false when an
	// object on the way is not in memory.
	peeled := func(sha string) (string, bool) {
		o, ok := g.memObject(sha)
		if !ok {
			return "", false
		}
		if !req.peel || o.typ != "tag" {
			return "", true
		}
		for range 10 {
			target, _, _ := strings.Cut(strings.TrimPrefix(string(o.data), "object "), "\n")
			if o, ok = g.memObject(target); !ok {
				return "", false
			}
			if o.typ != "tag" {
				return " peeled:" + target, true
			}
		}
		return "", false
	}
	if match("HEAD") {
		switch {
		case headBorn:
			p, ok := peeled(headSHA)
			if !ok {
				return nil, false
			}
			s := headSHA + " HEAD"
			if req.symrefs {
				s += " symref-target:" + head
			}
			line(s + p + "\n")
		case req.unborn && req.symrefs:
			line("unborn HEAD symref-target:" + head + "\n")
		}
	}
	for i, name := range names {
		p, ok := peeled(shas[i])
		if !ok {
			return nil, false
		}
		line(shas[i] + " " + name + p + "\n")
	}
	out.WriteString("0000")
	return out.Bytes(), true
}

// memObject returns an object held in memory here or in the fork network.
func (g *gitStore) memObject(sha string) (gitObject, bool) {
	for s := g; s != nil; s = s.parent {
		s.mu.Lock()
		o, ok := s.objs[sha]
		s.mu.Unlock()
		if ok {
			return o, true
		}
	}
	return gitObject{}, false
}

// serveLsRefs answers a v2 ls-refs command in process (git would run
// http-backend and upload-pack for it) and reports whether it did. When it
// did not, r's body is restored for git to read.
func (g *gitStore) serveLsRefs(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLsRefsRequest+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || int64(len(body)) != r.ContentLength {
		return false
	}
	req, ok := parseLsRefs(body)
	if !ok {
		return false
	}
	answer, ok := g.lsRefs(req)
	if !ok {
		return false
	}
	// the headers git http-backend sends with a stateless-rpc result
	h := w.Header()
	h.Set("Expires", "Fri, 01 Jan 1980 00:00:00 GMT")
	h.Set("Pragma", "no-cache")
	h.Set("Cache-Control", "no-cache, max-age=0, must-revalidate")
	h.Set("Content-Type", "application/x-git-upload-pack-result")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(answer)
	return true
}
