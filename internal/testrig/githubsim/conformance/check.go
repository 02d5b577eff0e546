package conformance

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Exchange is one captured HTTP request and its response.
type Exchange struct {
	Method     string
	URL        *url.URL
	ReqHeader  http.Header
	ReqBody    []byte
	Status     int
	RespHeader http.Header
	RespBody   []byte
}

// Violation is one way an exchange departs from the spec.
type Violation struct {
	Op    string // "GET /repos/{owner}/{repo}", or "GET /the/url" when unmatched
	Where string // "request path", "request query", "request body", "response 200"
	Path  string // JSON path inside the body, or the parameter name
	Msg   string
}

func (v Violation) String() string {
	if v.Path == "" {
		return fmt.Sprintf("%s: %s: %s", v.Op, v.Where, v.Msg)
	}
	return fmt.Sprintf("%s: %s: %s %s", v.Op, v.Where, v.Path, v.Msg)
}

// Check validates one exchange. basePath is the path prefix of the API base
// URL ("/" for a simulator at the root). It returns the operation key the
// exchange matched ("" when none) and every violation found.
func (s *Spec) Check(basePath string, ex Exchange) (string, []Violation) {
	urlPath := "/" + strings.TrimPrefix(strings.TrimPrefix(ex.URL.EscapedPath(), strings.TrimSuffix(basePath, "/")), "/")
	segs := strings.Split(urlPath, "/")
	for i, seg := range segs {
		if u, err := url.PathUnescape(seg); err == nil {
			segs[i] = u
		}
	}
	op := s.match(ex.Method, strings.Join(segs, "/"))
	if op == nil {
		return "", []Violation{{Op: ex.Method + " " + urlPath, Where: "request", Msg: "no operation in the spec serves this method and path"}}
	}
	c := checker{spec: s, op: op.key}
	c.params(op, ex.URL.Query())
	c.requestBody(op, ex)
	c.response(op, ex)
	return op.key, c.out
}

type checker struct {
	spec *Spec
	op   string
	out  []Violation
}

func (c *checker) add(where, path, msg string) {
	c.out = append(c.out, Violation{Op: c.op, Where: where, Path: path, Msg: msg})
}

func (c *checker) addSchema(where string, errs []schemaError) {
	for _, e := range errs {
		c.add(where, e.Path, e.Msg)
	}
}

func (c *checker) params(op *operation, query url.Values) {
	declared := map[string]bool{}
	for _, p := range op.params {
		name, _ := p["name"].(string)
		in, _ := p["in"].(string)
		required, _ := p["required"].(bool)
		var (
			raw     string
			present bool
			where   = "request " + in
		)
		switch in {
		case "path":
			raw, present = op.values[name]
		case "query":
			declared[name] = true
			var vals []string
			vals, present = query[name]
			if present && len(vals) > 0 {
				raw = vals[0]
			}
		default:
			continue // headers and cookies are the transport's business
		}
		if !present {
			if required || in == "path" {
				c.add(where, name, "required parameter is missing")
			}
			continue
		}
		var errs []schemaError
		c.spec.validate(p["schema"], coerce(c.spec, p["schema"], raw), name, &errs)
		c.addSchema(where, errs)
	}
	names := make([]string, 0, len(query))
	for name := range query {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !declared[name] {
			c.add("request query", name, "is not a documented query parameter")
		}
	}
}

// coerce turns a raw path or query string into the JSON value its schema
// expects, leaving it a string when it does not parse (the validator then
// reports the type mismatch).
func coerce(s *Spec, schema any, raw string) any {
	sch, _ := s.resolve(schema).(map[string]any)
	switch sch["type"] {
	case "integer", "number":
		if _, err := strconv.ParseFloat(raw, 64); err == nil {
			v, err := decodeJSON([]byte(raw))
			if err == nil {
				return v
			}
		}
	case "boolean":
		if b, err := strconv.ParseBool(raw); err == nil && (raw == "true" || raw == "false") {
			return b
		}
	}
	return raw
}

func (c *checker) requestBody(op *operation, ex Exchange) {
	body := bytes.TrimSpace(ex.ReqBody)
	rb, _ := c.spec.resolve(op.op["requestBody"]).(map[string]any)
	if rb == nil {
		if len(body) > 0 {
			c.add("request body", "", "the operation takes no request body, but one was sent")
		}
		return
	}
	if len(body) == 0 {
		if required, _ := rb["required"].(bool); required {
			c.add("request body", "", "required request body is missing")
		}
		return
	}
	schema := jsonSchema(rb)
	if schema == nil {
		c.add("request body", "", "the operation documents no JSON request body")
		return
	}
	v, err := decodeJSON(body)
	if err != nil {
		c.add("request body", "", "is not valid JSON: "+err.Error())
		return
	}
	var errs []schemaError
	c.spec.validate(schema, v, "$", &errs)
	c.addSchema("request body", errs)
}

func (c *checker) response(op *operation, ex Exchange) {
	where := fmt.Sprintf("response %d", ex.Status)
	responses, _ := op.op["responses"].(map[string]any)
	r, ok := responses[strconv.Itoa(ex.Status)]
	if !ok {
		r, ok = responses["default"]
	}
	if !ok {
		documented := make([]string, 0, len(responses))
		for code := range responses {
			documented = append(documented, code)
		}
		sort.Strings(documented)
		c.add(where, "", fmt.Sprintf("status %d is not documented for this operation (documented: %s)", ex.Status, strings.Join(documented, ", ")))
		return
	}
	body := bytes.TrimSpace(ex.RespBody)
	schema := jsonSchema(c.spec.resolve(r))
	if schema == nil {
		if len(body) > 0 {
			c.add(where, "", "the spec documents no body for this status, but one was sent")
		}
		return
	}
	if !isJSON(ex.RespHeader.Get("Content-Type")) {
		// The client asked for another media type (a diff, raw contents):
		// the JSON schema does not apply.
		if accept := ex.ReqHeader.Get("Accept"); accept != "" && !acceptsJSON(accept) {
			return
		}
		c.add(where, "", fmt.Sprintf("Content-Type %q is not JSON", ex.RespHeader.Get("Content-Type")))
		return
	}
	if len(body) == 0 {
		c.add(where, "", "the spec documents a JSON body, but none was sent")
		return
	}
	v, err := decodeJSON(body)
	if err != nil {
		c.add(where, "", "is not valid JSON: "+err.Error())
		return
	}
	var errs []schemaError
	c.spec.validate(schema, v, "$", &errs)
	c.addSchema(where, errs)
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// acceptsJSON reports whether an Accept header asks for (some) JSON;
// GitHub's vnd.github.v3+json style types count.
func acceptsJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if mt == "*/*" || mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/vnd.github.v3" {
			return true
		}
	}
	return false
}
