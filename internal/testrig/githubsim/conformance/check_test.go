package conformance

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func exchange(t *testing.T, method, rawURL, reqBody string, status int, respType, respBody string) Exchange {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	h := http.Header{}
	if respType != "" {
		h.Set("Content-Type", respType)
	}
	return Exchange{Method: method, URL: u, ReqHeader: http.Header{}, ReqBody: []byte(reqBody), Status: status, RespHeader: h, RespBody: []byte(respBody)}
}

const validRef = `{"ref":"refs/heads/main","node_id":"REF_1","url":"http://127.0.0.1/repos/o/r/git/refs/heads/main","object":{"type":"commit","sha":"0123456789abcdef0123456789abcdef01234567","url":"http://127.0.0.1/repos/o/r/git/commits/0123456789abcdef0123456789abcdef01234567"}}`

func TestCheck(t *testing.T) {
	s := loadSubset(t)
	const jsonType = "application/json; charset=utf-8"
	cases := []struct {
		name   string
		ex     Exchange
		wantOp string
		want   []string // substrings of Violation.String(), in order
	}{
		{"valid ref", exchange(t, "GET", "http://h/repos/o/r/git/ref/heads/main", "", 200, jsonType, validRef),
			"GET /repos/{owner}/{repo}/git/ref/{ref}", nil},
		{"escaped ref path", exchange(t, "GET", "http://h/repos/o/r/git/ref/heads%2Fmain", "", 200, jsonType, validRef),
			"GET /repos/{owner}/{repo}/git/ref/{ref}", nil},
		{"response missing required field", exchange(t, "GET", "http://h/repos/o/r/git/ref/heads/main", "", 200, jsonType, strings.Replace(validRef, `"node_id":"REF_1",`, "", 1)),
			"GET /repos/{owner}/{repo}/git/ref/{ref}", []string{"response 200: $.node_id required property is missing"}},
		{"undocumented status", exchange(t, "GET", "http://h/repos/o/r/git/ref/heads/main", "", 403, jsonType, `{"message":"x"}`),
			"GET /repos/{owner}/{repo}/git/ref/{ref}", []string{"status 403 is not documented"}},
		{"error body checked", exchange(t, "GET", "http://h/repos/o/r/git/ref/heads/x", "", 404, jsonType, `{"message":5}`),
			"GET /repos/{owner}/{repo}/git/ref/{ref}", []string{"response 404: $.message is the number 5, want string"}},
		{"response not JSON", exchange(t, "GET", "http://h/repos/o/r/git/ref/heads/main", "", 200, "text/plain", validRef),
			"GET /repos/{owner}/{repo}/git/ref/{ref}", []string{`Content-Type "text/plain" is not JSON`}},
		{"empty documented body", exchange(t, "GET", "http://h/repos/o/r/git/ref/heads/main", "", 200, jsonType, ""),
			"GET /repos/{owner}/{repo}/git/ref/{ref}", []string{"documents a JSON body, but none was sent"}},
		{"body on 204", exchange(t, "POST", "http://h/repos/o/r/dispatches", `{"event_type":"agent_small","client_payload":{}}`, 204, jsonType, `{}`),
			"POST /repos/{owner}/{repo}/dispatches", []string{"documents no body for this status"}},
		{"valid dispatch", exchange(t, "POST", "http://h/repos/o/r/dispatches", `{"event_type":"agent_small","client_payload":{"jobid":"x"}}`, 204, "", ""),
			"POST /repos/{owner}/{repo}/dispatches", nil},
		{"request body too many properties", exchange(t, "POST", "http://h/repos/o/r/dispatches", `{"event_type":"e","client_payload":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1}}`, 204, "", ""),
			"POST /repos/{owner}/{repo}/dispatches", []string{"request body: $.client_payload property count 11 violates maxProperties 10"}},
		{"request body missing", exchange(t, "POST", "http://h/repos/o/r/dispatches", "", 204, "", ""),
			"POST /repos/{owner}/{repo}/dispatches", []string{"required request body is missing"}},
		{"request body invalid JSON", exchange(t, "POST", "http://h/repos/o/r/dispatches", `{`, 204, "", ""),
			"POST /repos/{owner}/{repo}/dispatches", []string{"request body: is not valid JSON"}},
		{"body on GET", exchange(t, "GET", "http://h/user", `{"x":1}`, 304, "", ""),
			"GET /user", []string{"takes no request body"}},
		{"path parameter type", exchange(t, "GET", "http://h/repos/o/r/issues/abc", "", 404, jsonType, `{"message":"Not Found"}`),
			"GET /repos/{owner}/{repo}/issues/{issue_number}", []string{`request path: issue_number is a string "abc", want integer`}},
		{"query parameter enum", exchange(t, "GET", "http://h/repos/o/r/issues?state=merged&per_page=2", "", 200, jsonType, `[]`),
			"GET /repos/{owner}/{repo}/issues", []string{`request query: state "merged" is not one of`}},
		{"unknown query parameter", exchange(t, "GET", "http://h/repos/o/r/issues?colour=red", "", 200, jsonType, `[]`),
			"GET /repos/{owner}/{repo}/issues", []string{"request query: colour is not a documented query parameter"}},
		{"boolean query", exchange(t, "GET", "http://h/notifications?all=yes", "", 200, jsonType, `[]`),
			"GET /notifications", []string{`request query: all is a string "yes", want boolean`}},
		{"raw diff skips the schema", func() Exchange {
			ex := exchange(t, "GET", "http://h/repos/o/r/pulls/1", "", 200, "text/x-diff", "diff --git a/x b/x\n")
			ex.ReqHeader.Set("Accept", "application/vnd.github.v3.diff")
			return ex
		}(), "GET /repos/{owner}/{repo}/pulls/{pull_number}", nil},
		{"labels as documented", exchange(t, "POST", "http://h/repos/o/r/issues/1/labels", `{"labels":["bug"]}`, 200, jsonType, `[]`),
			"POST /repos/{owner}/{repo}/issues/{issue_number}/labels", nil},
		// What go-github v62's AddLabelsToIssue sends: not in GitHub's current spec.
		{"labels as a bare array", exchange(t, "POST", "http://h/repos/o/r/issues/1/labels", `["bug"]`, 200, jsonType, `[]`),
			"POST /repos/{owner}/{repo}/issues/{issue_number}/labels", []string{"request body: $ matches none of the oneOf alternatives"}},
		{"unknown operation", exchange(t, "GET", "http://h/emojis", "", 200, jsonType, `{}`),
			"", []string{"GET /emojis: request: no operation in the spec serves this method and path"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op, vs := s.Check("/", c.ex)
			assert.Equal(t, c.wantOp, op)
			require.Len(t, vs, len(c.want), "violations: %v", vs)
			for i, w := range c.want {
				assert.Contains(t, vs[i].String(), w)
			}
		})
	}
}

func TestCheckBasePath(t *testing.T) {
	s := loadSubset(t)
	ex := exchange(t, "GET", "http://h/api/v3/repos/o/r/git/ref/heads/main", "", 200, "application/json", validRef)
	op, vs := s.Check("/api/v3/", ex)
	assert.Equal(t, "GET /repos/{owner}/{repo}/git/ref/{ref}", op)
	assert.Empty(t, vs)
}

func TestRecorder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	rec := &Recorder{}
	client := &http.Client{Transport: rec}
	resp, err := client.Post(srv.URL+"/x?y=1", "application/json", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	body := make([]byte, 64)
	n, _ := resp.Body.Read(body)
	assert.Equal(t, `{"ok":true}`, string(body[:n]), "the caller still reads the body")

	exs := rec.Exchanges()
	require.Len(t, exs, 1)
	assert.Equal(t, "POST", exs[0].Method)
	assert.Equal(t, "/x", exs[0].URL.Path)
	assert.Equal(t, "1", exs[0].URL.Query().Get("y"))
	assert.Equal(t, `{"a":1}`, string(exs[0].ReqBody))
	assert.Equal(t, 201, exs[0].Status)
	assert.Equal(t, `{"ok":true}`, string(exs[0].RespBody))
}
