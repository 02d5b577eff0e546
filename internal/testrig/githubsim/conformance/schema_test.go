package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// miniSpec wraps component schemas in a minimal document for unit tests.
func miniSpec(t testing.TB, schemas string) *Spec {
	t.Helper()
	s, err := Parse([]byte(`{"openapi":"3.0.3","paths":{},"components":{"schemas":` + schemas + `}}`))
	require.NoError(t, err)
	return s
}

func errorsFor(t testing.TB, s *Spec, schema, value string) []schemaError {
	t.Helper()
	sch, err := decodeJSON([]byte(schema))
	require.NoError(t, err)
	v, err := decodeJSON([]byte(value))
	require.NoError(t, err)
	var out []schemaError
	s.validate(sch, v, "$", &out)
	return out
}

func TestValidate(t *testing.T) {
	s := miniSpec(t, `{
		"user": {"type":"object","properties":{"login":{"type":"string"},"id":{"type":"integer"}},"required":["login","id"]},
		"nullable-user": {"type":"object","nullable":true,"properties":{"login":{"type":"string"}},"required":["login"]},
		"file": {"type":"object","properties":{"type":{"type":"string","enum":["file"]}},"required":["type"]},
		"dir": {"type":"object","properties":{"type":{"type":"string","enum":["dir"]}},"required":["type"]},
		"open-a": {"type":"object","properties":{"message":{"type":"string"}}},
		"open-b": {"type":"object","properties":{"message":{"type":"string"},"status":{"type":"string"}}}
	}`)
	cases := []struct {
		name, schema, value string
		want                []string // "path: message substring"; empty = valid
	}{
		{"string ok", `{"type":"string"}`, `"x"`, nil},
		{"string wrong type", `{"type":"string"}`, `5`, []string{"$: is the number 5, want string"}},
		{"integer ok", `{"type":"integer"}`, `12345678901234`, nil},
		{"integer rejects fraction", `{"type":"integer"}`, `1.5`, []string{"$: is the number 1.5, want integer"}},
		{"number accepts fraction", `{"type":"number"}`, `1.5`, nil},
		{"boolean", `{"type":"boolean"}`, `"true"`, []string{`$: is a string "true", want boolean`}},
		{"null not allowed", `{"type":"string"}`, `null`, []string{"$: is null, but the schema is not nullable"}},
		{"nullable string", `{"type":"string","nullable":true}`, `null`, nil},
		{"ref to nullable", `{"$ref":"#/components/schemas/nullable-user"}`, `null`, nil},
		{"ref to non-nullable", `{"$ref":"#/components/schemas/user"}`, `null`, []string{"$: is null"}},
		{"required missing", `{"$ref":"#/components/schemas/user"}`, `{"login":"a"}`, []string{"$.id: required property is missing"}},
		{"nested property type", `{"type":"object","properties":{"owner":{"$ref":"#/components/schemas/user"}}}`, `{"owner":{"login":"a","id":"7"}}`, []string{`$.owner.id: is a string "7", want integer`}},
		{"extra properties allowed by default", `{"$ref":"#/components/schemas/user"}`, `{"login":"a","id":1,"x":true}`, nil},
		{"additionalProperties false", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{"a":"x","b":1}`, []string{"$.b: property is not allowed"}},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1,"b":"x"}`, []string{`$.b: is a string "x", want integer`}},
		{"items", `{"type":"array","items":{"type":"integer"}}`, `[1,"2",3]`, []string{`$[1]: is a string "2", want integer`}},
		{"enum", `{"type":"string","enum":["open","closed"]}`, `"merged"`, []string{`$: "merged" is not one of ["open","closed"]`}},
		{"nullable enum accepts null", `{"type":"string","nullable":true,"enum":["a"]}`, `null`, nil},
		{"numeric enum", `{"type":"integer","enum":[1,2]}`, `2`, nil},
		{"date-time ok", `{"type":"string","format":"date-time"}`, `"2024-01-02T03:04:05Z"`, nil},
		{"date-time bad", `{"type":"string","format":"date-time"}`, `"2024-01-02 03:04"`, []string{"not an RFC 3339 date-time"}},
		{"uri ok", `{"type":"string","format":"uri"}`, `"http://127.0.0.1:8080/repos/o/r"`, nil},
		{"uri relative", `{"type":"string","format":"uri"}`, `"/repos/o/r"`, []string{"not an absolute URI"}},
		{"uri empty", `{"type":"string","format":"uri"}`, `""`, []string{"not an absolute URI"}},
		{"email is informational", `{"type":"string","format":"email"}`, `"nope"`, nil},
		{"oneOf exactly one", `{"oneOf":[{"$ref":"#/components/schemas/file"},{"$ref":"#/components/schemas/dir"}]}`, `{"type":"dir"}`, nil},
		{"oneOf none", `{"oneOf":[{"$ref":"#/components/schemas/file"},{"$ref":"#/components/schemas/dir"}]}`, `{"type":"link"}`, []string{"$: matches none of the oneOf alternatives; closest: $.type"}},
		{"oneOf two", `{"oneOf":[{"type":"string"},{"type":"string","maxLength":3}]}`, `"ab"`, []string{"$: matches 2 oneOf alternatives"}},
		{"oneOf with null alternative via nullable", `{"nullable":true,"oneOf":[{"type":"string"},{"type":"object"}]}`, `null`, nil},
		{"oneOf two open objects", `{"oneOf":[{"$ref":"#/components/schemas/open-a"},{"$ref":"#/components/schemas/open-b"}]}`, `{"message":"Conflict"}`, nil},
		{"oneOf two open objects, still typed", `{"oneOf":[{"$ref":"#/components/schemas/open-a"},{"$ref":"#/components/schemas/open-b"}]}`, `{"message":7}`, []string{"$: matches none of the oneOf alternatives"}},
		{"oneOf two objects, one with required", `{"oneOf":[{"$ref":"#/components/schemas/open-a"},{"$ref":"#/components/schemas/user"}]}`, `{"login":"a","id":1}`, []string{"$: matches 2 oneOf alternatives"}},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, []string{"$: matches none of the anyOf"}},
		{"anyOf ok", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `3`, nil},
		{"allOf", `{"allOf":[{"$ref":"#/components/schemas/user"},{"type":"object","required":["email"]}]}`, `{"login":"a","id":1}`, []string{"$.email: required property is missing"}},
		{"maxLength counts runes", `{"type":"string","maxLength":2}`, `"äö"`, nil},
		{"maxLength", `{"type":"string","maxLength":2}`, `"abc"`, []string{"length 3 violates maxLength 2"}},
		{"maxItems", `{"type":"array","maxItems":1}`, `[1,2]`, []string{"item count 2 violates maxItems 1"}},
		{"maxProperties", `{"type":"object","maxProperties":1}`, `{"a":1,"b":2}`, []string{"property count 2 violates maxProperties 1"}},
		{"dangling ref", `{"$ref":"#/components/schemas/nope"}`, `1`, []string{"schema is not an object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := errorsFor(t, s, c.schema, c.value)
			require.Len(t, got, len(c.want), "errors: %v", got)
			for i, w := range c.want {
				path, msg, ok := strings.Cut(w, ": ")
				if !ok {
					msg, path = w, ""
				}
				if path != "" {
					assert.Equal(t, path, got[i].Path)
				}
				assert.Contains(t, got[i].Msg, msg)
			}
		})
	}
}

func TestSubsetUsesOnlySupportedKeywords(t *testing.T) {
	s := loadSubset(t)
	// Regenerating the subset with a keyword the validator would ignore
	// must fail here rather than weaken every check silently.
	assert.Empty(t, s.UnsupportedKeywords())
}

func TestUnsupportedKeywordsIsDetected(t *testing.T) {
	s := miniSpec(t, `{"a":{"type":"string","pattern":"^x$"},"b":{"type":"object","properties":{"c":{"not":{"type":"string"}}}}}`)
	assert.Equal(t, []string{"not", "pattern"}, s.UnsupportedKeywords())
}

func TestSubsetHasEveryOperationWeUse(t *testing.T) {
	assert.Equal(t, usedOperations, loadSubset(t).Operations())
}

func TestMatch(t *testing.T) {
	s := loadSubset(t)
	cases := []struct {
		method, path, want string
		values             map[string]string
	}{
		{"GET", "/user", "GET /user", map[string]string{}},
		{"GET", "/users/octo", "GET /users/{username}", map[string]string{"username": "octo"}},
		{"GET", "/repos/o/r/issues/comments/5", "GET /repos/{owner}/{repo}/issues/comments/{comment_id}", map[string]string{"owner": "o", "repo": "r", "comment_id": "5"}},
		{"GET", "/repos/o/r/issues/7", "GET /repos/{owner}/{repo}/issues/{issue_number}", map[string]string{"owner": "o", "repo": "r", "issue_number": "7"}},
		{"GET", "/repos/o/r/git/ref/heads/feature/x", "GET /repos/{owner}/{repo}/git/ref/{ref}", map[string]string{"owner": "o", "repo": "r", "ref": "heads/feature/x"}},
		{"DELETE", "/repos/o/r/git/refs/mention-runner/jobs/j/lock", "DELETE /repos/{owner}/{repo}/git/refs/{ref}", map[string]string{"owner": "o", "repo": "r", "ref": "mention-runner/jobs/j/lock"}},
		{"PUT", "/repos/o/r/contents/docs/a.json", "PUT /repos/{owner}/{repo}/contents/{path}", map[string]string{"owner": "o", "repo": "r", "path": "docs/a.json"}},
		{"POST", "/repos/o/r/git/refs", "POST /repos/{owner}/{repo}/git/refs", map[string]string{"owner": "o", "repo": "r"}},
		{"POST", "/repos/o/r/pulls/comments/9/reactions", "POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions", map[string]string{"owner": "o", "repo": "r", "comment_id": "9"}},
		{"DELETE", "/user", "", nil},
		{"GET", "/repos/o/r/git/ref", "", nil},
		{"GET", "/nope", "", nil},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			op := s.match(c.method, c.path)
			if c.want == "" {
				assert.Nil(t, op)
				return
			}
			require.NotNil(t, op)
			assert.Equal(t, c.want, op.key)
			assert.Equal(t, c.values, op.values)
		})
	}
}

func FuzzValidate(f *testing.F) {
	s := loadSubset(f)
	schemas := []string{"issue", "issue-comment", "full-repository", "content-file", "validation-error", "thread", "git-ref", "pull-request"}
	f.Add(uint8(0), []byte(`{"id":1}`))
	f.Add(uint8(3), []byte(`{"type":"file","content":"aGk="}`))
	f.Add(uint8(4), []byte(`{"message":"x","errors":[{"code":"missing"}]}`))
	f.Add(uint8(7), []byte(`null`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		v, err := decodeJSON(body)
		if err != nil {
			return
		}
		var out []schemaError
		ref := map[string]any{"$ref": "#/components/schemas/" + schemas[int(which)%len(schemas)]}
		s.validate(ref, v, "$", &out) // must not panic on any JSON value
		for _, e := range out {
			require.NotEmpty(t, e.Msg)
			require.True(t, strings.HasPrefix(e.Path, "$"), e.Path)
		}
	})
}

func BenchmarkValidateRepository(b *testing.B) {
	s := loadSubset(b)
	v, err := decodeJSON([]byte(`{"id":1,"node_id":"R_1","name":"r","full_name":"o/r","private":false,"owner":{"login":"o","id":1}}`))
	require.NoError(b, err)
	ref := map[string]any{"$ref": "#/components/schemas/full-repository"}
	b.ReportAllocs()
	for b.Loop() {
		var out []schemaError
		s.validate(ref, v, "$", &out)
	}
}
