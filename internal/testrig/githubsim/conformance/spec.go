// Package conformance checks HTTP exchanges with the GitHub simulator
// against GitHub's own OpenAPI 3.0 description (the trimmed subset in
// testdata/openapi-subset.json, cut from the npm package @octokit/openapi by
// scripts/fixtures/extract-openapi.mjs): response bodies against the response
// schema for the returned status, request bodies against the request schema,
// and path and query parameters against their declarations.
package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Spec is a loaded OpenAPI document. Values are kept as decoded JSON
// (numbers as json.Number) and $refs are resolved on use.
type Spec struct {
	root      map[string]any
	templates []template
}

// template is one path of the spec split into segments for matching.
type template struct {
	path string
	segs []string // literal, or "{name}" for a parameter
	// multi names the parameters that may span several segments
	// (x-multi-segment: git refs like heads/main, file paths).
	multi map[string]bool
}

// Load reads an OpenAPI JSON document from a file.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load openapi: %w", err)
	}
	return Parse(data)
}

// Parse decodes an OpenAPI JSON document.
func Parse(data []byte) (*Spec, error) {
	root, err := decodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("parse openapi: %w", err)
	}
	doc, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parse openapi: document is not an object")
	}
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parse openapi: no paths object")
	}
	s := &Spec{root: doc}
	for p, item := range paths {
		t := template{path: p, segs: strings.Split(strings.TrimPrefix(p, "/"), "/"), multi: map[string]bool{}}
		for m, op := range item.(map[string]any) {
			opMap, _ := op.(map[string]any)
			if m == "parameters" {
				opMap = nil
			}
			for _, param := range s.parameters(item.(map[string]any), opMap) {
				if name, _ := param["name"].(string); param["in"] == "path" && param["x-multi-segment"] == true {
					t.multi[name] = true
				}
			}
		}
		s.templates = append(s.templates, t)
	}
	// Deterministic matching order: more literal segments first.
	sort.Slice(s.templates, func(i, j int) bool {
		li, lj := literals(s.templates[i].segs), literals(s.templates[j].segs)
		if li != lj {
			return li > lj
		}
		return s.templates[i].path < s.templates[j].path
	})
	return s, nil
}

// decodeJSON decodes one JSON value keeping numbers exact, so integer and
// number can be told apart.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func literals(segs []string) int {
	n := 0
	for _, s := range segs {
		if !isParam(s) {
			n++
		}
	}
	return n
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// Operations lists every operation in the spec as "METHOD /path", sorted.
func (s *Spec) Operations() []string {
	var ops []string
	for p, item := range s.root["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			if m != "parameters" {
				ops = append(ops, strings.ToUpper(m)+" "+p)
			}
		}
	}
	sort.Strings(ops)
	return ops
}

// operation is one method of one path, with its path-level parameters merged.
type operation struct {
	key    string // "GET /repos/{owner}/{repo}"
	op     map[string]any
	params []map[string]any
	values map[string]string // path parameter values from the URL
}

// match finds the operation serving method and URL path (already stripped of
// any base path), or nil.
func (s *Spec) match(method, urlPath string) *operation {
	segs := strings.Split(strings.TrimPrefix(urlPath, "/"), "/")
	for _, t := range s.templates {
		values, ok := t.bind(segs)
		if !ok {
			continue
		}
		item := s.root["paths"].(map[string]any)[t.path].(map[string]any)
		op, ok := item[strings.ToLower(method)].(map[string]any)
		if !ok {
			continue
		}
		return &operation{
			key:    strings.ToUpper(method) + " " + t.path,
			op:     op,
			params: s.parameters(item, op),
			values: values,
		}
	}
	return nil
}

// bind matches URL segments to the template; a multi-segment parameter
// takes as many segments as the literals after it leave over.
func (t template) bind(segs []string) (map[string]string, bool) {
	values := map[string]string{}
	i := 0
	for j, ts := range t.segs {
		if i >= len(segs) {
			return nil, false
		}
		if !isParam(ts) {
			if segs[i] != ts {
				return nil, false
			}
			i++
			continue
		}
		name := ts[1 : len(ts)-1]
		take := 1
		if t.multi[name] {
			take = len(segs) - i - (len(t.segs) - j - 1)
			if take < 1 {
				return nil, false
			}
		}
		v := strings.Join(segs[i:i+take], "/")
		if v == "" {
			return nil, false
		}
		values[name] = v
		i += take
	}
	if i != len(segs) {
		return nil, false
	}
	return values, true
}

// parameters merges path-level and operation-level parameters (the
// operation's win on the same name and location), resolving $refs.
func (s *Spec) parameters(item, op map[string]any) []map[string]any {
	byKey := map[string]map[string]any{}
	var order []string
	add := func(list any) {
		arr, _ := list.([]any)
		for _, p := range arr {
			param, ok := s.resolve(p).(map[string]any)
			if !ok {
				continue
			}
			k := fmt.Sprint(param["in"], ":", param["name"])
			if _, seen := byKey[k]; !seen {
				order = append(order, k)
			}
			byKey[k] = param
		}
	}
	add(item["parameters"])
	if op != nil {
		add(op["parameters"])
	}
	out := make([]map[string]any, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out
}

// resolve follows local $refs ("#/components/…") until it reaches a value.
func (s *Spec) resolve(v any) any {
	for range 32 { // bounded: a cycle of pure $refs is a broken spec
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return v
		}
		v = s.pointer(ref)
	}
	return nil
}

// pointer looks up a local JSON pointer; nil when it dangles.
func (s *Spec) pointer(ref string) any {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	var cur any = s.root
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}
