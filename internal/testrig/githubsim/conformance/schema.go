package conformance

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Keywords are the schema keywords the validator enforces. A schema using
// any keyword outside Keywords and Annotations must fail the spec check
// rather than be silently ignored (see UnsupportedKeywords).
var Keywords = []string{
	"$ref", "type", "nullable", "properties", "required", "items", "enum",
	"oneOf", "anyOf", "allOf", "format", "additionalProperties",
	"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
	"minimum", "maximum",
}

// Annotations are keywords that describe but do not constrain.
var Annotations = []string{"title", "default", "deprecated", "discriminator", "readOnly", "writeOnly"}

// schemaError is one way a value fails its schema.
type schemaError struct {
	Path string // JSON path of the value, "$.user.login"
	Msg  string
}

// validate checks value (decoded with UseNumber) against schema.
func (s *Spec) validate(schema, value any, path string, out *[]schemaError) {
	sch, ok := s.resolve(schema).(map[string]any)
	if !ok {
		*out = append(*out, schemaError{path, fmt.Sprintf("schema is not an object (dangling $ref?): %v", schema)})
		return
	}
	if value == nil {
		if sch["nullable"] == true {
			return
		}
		// A schema with no type of its own (only $ref/oneOf/…) lets its
		// parts decide; GitHub's spec marks nullability on those parts.
		if _, typed := sch["type"]; typed {
			*out = append(*out, schemaError{path, "is null, but the schema is not nullable"})
			return
		}
		if enum, _ := sch["enum"].([]any); len(enum) > 0 || sch["properties"] != nil {
			*out = append(*out, schemaError{path, "is null, but the schema is not nullable"})
			return
		}
	}
	if t, ok := sch["type"].(string); ok && !hasType(value, t) {
		*out = append(*out, schemaError{path, fmt.Sprintf("is %s, want %s", describe(value), t)})
		return
	}
	if enum, ok := sch["enum"].([]any); ok && !inEnum(value, enum) {
		*out = append(*out, schemaError{path, fmt.Sprintf("%s is not one of %s", compact(value), compact(enum))})
	}
	if f, ok := sch["format"].(string); ok {
		if str, isStr := value.(string); isStr {
			if msg := checkFormat(f, str); msg != "" {
				*out = append(*out, schemaError{path, msg})
			}
		}
	}
	s.validateBounds(sch, value, path, out)
	switch v := value.(type) {
	case map[string]any:
		s.validateObject(sch, v, path, out)
	case []any:
		if items, ok := sch["items"]; ok {
			for i, el := range v {
				s.validate(items, el, fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	}
	if all, ok := sch["allOf"].([]any); ok {
		for _, sub := range all {
			s.validate(sub, value, path, out)
		}
	}
	if any_, ok := sch["anyOf"].([]any); ok {
		if matched, closest := s.matches(any_, value, path); len(matched) == 0 {
			*out = append(*out, schemaError{path, "matches none of the anyOf alternatives; closest: " + closest})
		}
	}
	if one, ok := sch["oneOf"].([]any); ok {
		switch matched, closest := s.matches(one, value, path); {
		case len(matched) == 1:
		case len(matched) == 0:
			*out = append(*out, schemaError{path, "matches none of the oneOf alternatives; closest: " + closest})
		case !s.allOpen(matched):
			*out = append(*out, schemaError{path, fmt.Sprintf("matches %d oneOf alternatives, want exactly 1", len(matched))})
		}
	}
}

// allOpen reports whether every schema is an object schema with no required
// property and no additionalProperties: false. Such alternatives accept
// every well-typed object, so GitHub's spec gives no way to tell them apart
// (its 409 answer to PUT contents is oneOf two such error shapes, which any
// real GitHub error body matches twice); only there is a multiple match
// accepted. Every alternative the value matched was still fully validated.
func (s *Spec) allOpen(schemas []any) bool {
	for _, alt := range schemas {
		sch, _ := s.resolve(alt).(map[string]any)
		if sch["type"] != "object" || sch["additionalProperties"] == false {
			return false
		}
		if req, _ := sch["required"].([]any); len(req) > 0 {
			return false
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			if _, ok := sch[k]; ok {
				return false
			}
		}
	}
	return true
}

// matches returns the alternatives value satisfies, and describes the
// failures of the nearest miss to make a report actionable.
func (s *Spec) matches(alts []any, value any, path string) ([]any, string) {
	var matched []any
	var best []schemaError
	for _, alt := range alts {
		var errs []schemaError
		s.validate(alt, value, path, &errs)
		if len(errs) == 0 {
			matched = append(matched, alt)
		} else if best == nil || len(errs) < len(best) {
			best = errs
		}
	}
	parts := make([]string, 0, 3)
	for i, e := range best {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, e.Path+" "+e.Msg)
	}
	return matched, strings.Join(parts, "; ")
}

func (s *Spec) validateObject(sch map[string]any, obj map[string]any, path string, out *[]schemaError) {
	props, _ := sch["properties"].(map[string]any)
	if req, ok := sch["required"].([]any); ok {
		for _, r := range req {
			name, _ := r.(string)
			if _, present := obj[name]; !present {
				*out = append(*out, schemaError{path + "." + name, "required property is missing"})
			}
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, ok := props[k]; ok {
			s.validate(p, obj[k], path+"."+k, out)
			continue
		}
		switch ap := sch["additionalProperties"].(type) {
		case bool:
			if !ap {
				*out = append(*out, schemaError{path + "." + k, "property is not allowed (additionalProperties: false)"})
			}
		case map[string]any:
			s.validate(ap, obj[k], path+"."+k, out)
		}
	}
}

func (s *Spec) validateBounds(sch map[string]any, value any, path string, out *[]schemaError) {
	limit := func(key string) (float64, bool) {
		n, ok := sch[key].(json.Number)
		if !ok {
			return 0, false
		}
		f, err := n.Float64()
		return f, err == nil
	}
	check := func(key string, got float64, tooSmall bool, what string) {
		if l, ok := limit(key); ok && ((tooSmall && got < l) || (!tooSmall && got > l)) {
			*out = append(*out, schemaError{path, fmt.Sprintf("%s %v violates %s %v", what, got, key, l)})
		}
	}
	switch v := value.(type) {
	case string:
		n := float64(utf8.RuneCountInString(v))
		check("minLength", n, true, "length")
		check("maxLength", n, false, "length")
	case []any:
		check("minItems", float64(len(v)), true, "item count")
		check("maxItems", float64(len(v)), false, "item count")
	case map[string]any:
		check("minProperties", float64(len(v)), true, "property count")
		check("maxProperties", float64(len(v)), false, "property count")
	case json.Number:
		if f, err := v.Float64(); err == nil {
			check("minimum", f, true, "value")
			check("maximum", f, false, "value")
		}
	}
}

func hasType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		return ok && !strings.ContainsAny(n.String(), ".eE")
	}
	return false
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string " + compact(x)
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + x.String()
	}
	return fmt.Sprintf("%T", v)
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "…"
	}
	return string(b)
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		switch ev := e.(type) {
		case json.Number:
			if n, ok := v.(json.Number); ok && n.String() == ev.String() {
				return true
			}
		default:
			if e == v {
				return true
			}
		}
	}
	return false
}

// checkFormat checks the formats whose shape a client relies on; the
// others (email, int64, repo.nwo) are informational here.
func checkFormat(format, s string) string {
	switch format {
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Sprintf("%q is not an RFC 3339 date-time", s)
		}
	case "uri":
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" {
			return fmt.Sprintf("%q is not an absolute URI", s)
		}
	}
	return ""
}

// UnsupportedKeywords lists every keyword used by a schema in the spec that
// the validator neither enforces nor knows to be an annotation.
func (s *Spec) UnsupportedKeywords() []string {
	known := map[string]bool{}
	for _, k := range append(append([]string{}, Keywords...), Annotations...) {
		known[k] = true
	}
	found := map[string]bool{}
	var walk func(schema any)
	seen := map[string]bool{}
	walk = func(schema any) {
		sch, ok := schema.(map[string]any)
		if !ok {
			return
		}
		if ref, ok := sch["$ref"].(string); ok {
			if !seen[ref] {
				seen[ref] = true
				walk(s.pointer(ref))
			}
		}
		for k, v := range sch {
			if !known[k] && !strings.HasPrefix(k, "x-") {
				found[k] = true
			}
			switch k {
			case "properties":
				if m, ok := v.(map[string]any); ok {
					for _, p := range m {
						walk(p)
					}
				}
			case "items":
				walk(v)
			case "additionalProperties":
				walk(v)
			case "oneOf", "anyOf", "allOf":
				subs, _ := v.([]any)
				for _, sub := range subs {
					walk(sub)
				}
			}
		}
	}
	for _, sch := range s.allSchemas() {
		walk(sch)
	}
	out := make([]string, 0, len(found))
	for k := range found {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// allSchemas returns the top-level schemas of every parameter, request body
// and response of every operation, plus every component schema.
func (s *Spec) allSchemas() []any {
	var out []any
	if comps, ok := s.root["components"].(map[string]any); ok {
		if schemas, ok := comps["schemas"].(map[string]any); ok {
			for _, sch := range schemas {
				out = append(out, sch)
			}
		}
	}
	for _, key := range s.Operations() {
		method, path, _ := strings.Cut(key, " ")
		item := s.root["paths"].(map[string]any)[path].(map[string]any)
		op := item[strings.ToLower(method)].(map[string]any)
		for _, p := range s.parameters(item, op) {
			out = append(out, p["schema"])
		}
		out = append(out, jsonSchema(s.resolve(op["requestBody"])))
		if responses, ok := op["responses"].(map[string]any); ok {
			for _, r := range responses {
				out = append(out, jsonSchema(s.resolve(r)))
			}
		}
	}
	return out
}

// jsonSchema returns the application/json schema of a request body or
// response object, or nil when it has none.
func jsonSchema(obj any) any {
	m, _ := obj.(map[string]any)
	content, _ := m["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	if media == nil {
		return nil
	}
	return media["schema"]
}
