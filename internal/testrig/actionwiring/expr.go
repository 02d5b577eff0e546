package actionwiring

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The expressions our workflow and action use are a small part of GitHub's
// language: literals, context properties (a.b, a['b']), !, ==, !=, && and
// ||, with parentheses. Anything else (a function call, <, an index by
// number) is an error, so a test built on this evaluator fails instead of
// guessing when the files start using more.

// Context is what the names in an expression resolve to: each top-level
// name (inputs, secrets, github, needs, …) maps to a nested map of
// strings. A missing property is null, as in GitHub; a missing top-level
// name is an error.
type Context map[string]any

// ErrUnsupported marks a valid-looking expression that uses a part of the
// language this evaluator does not implement.
var ErrUnsupported = errors.New("unsupported expression")

// Eval evaluates one expression (the text inside ${{ }}).
func Eval(src string, c Context) (any, error) {
	p := &parser{src: src, c: c}
	v, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.src) {
		return nil, fmt.Errorf("expression %q: unexpected %q at %d", src, p.src[p.i:], p.i)
	}
	return v, nil
}

// Interpolate replaces every ${{ … }} in s by its value as a string.
func Interpolate(s string, c Context) (string, error) {
	var out strings.Builder
	for {
		start := strings.Index(s, "${{")
		if start < 0 {
			out.WriteString(s)
			return out.String(), nil
		}
		out.WriteString(s[:start])
		rest := s[start+3:]
		end := closing(rest)
		if end < 0 {
			return "", fmt.Errorf("%q: ${{ without }}", s)
		}
		v, err := Eval(rest[:end], c)
		if err != nil {
			return "", err
		}
		out.WriteString(String(v))
		s = rest[end+2:]
	}
}

// closing finds the }} that ends an expression, skipping string literals.
func closing(s string) int {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			quoted = !quoted // '' inside a literal toggles twice
		case !quoted && strings.HasPrefix(s[i:], "}}"):
			return i
		}
	}
	return -1
}

// String converts a value as GitHub does when it interpolates it.
func String(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// Truthy is GitHub's truthiness: false, 0, NaN, "" and null are false.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

type parser struct {
	src string
	i   int
	c   Context
}

func (p *parser) space() {
	for p.i < len(p.src) && strings.ContainsRune(" \t\r\n", rune(p.src[p.i])) {
		p.i++
	}
}

func (p *parser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *parser) errf(format string, a ...any) error {
	return fmt.Errorf("expression %q at %d: %s", p.src, p.i, fmt.Sprintf(format, a...))
}

// or and and return the deciding operand, as GitHub does (a || 'x').
func (p *parser) or() (any, error) {
	v, err := p.and()
	for err == nil && p.eat("||") {
		var r any
		if r, err = p.and(); err == nil && !Truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *parser) and() (any, error) {
	v, err := p.cmp()
	for err == nil && p.eat("&&") {
		var r any
		if r, err = p.cmp(); err == nil && Truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *parser) cmp() (any, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	switch {
	case p.eat("=="):
		r, err := p.unary()
		return err == nil && equal(l, r), err
	case p.eat("!="):
		r, err := p.unary()
		return err == nil && !equal(l, r), err
	}
	p.space()
	if p.i < len(p.src) && strings.ContainsRune("<>", rune(p.src[p.i])) {
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, p.errf("comparison %q", p.src[p.i:]))
	}
	return l, nil
}

func (p *parser) unary() (any, error) {
	if p.eat("!") {
		v, err := p.unary()
		return err == nil && !Truthy(v), err
	}
	return p.primary()
}

func (p *parser) primary() (any, error) {
	p.space()
	if p.i >= len(p.src) {
		return nil, p.errf("missing operand")
	}
	switch ch := p.src[p.i]; {
	case ch == '(':
		p.i++
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, p.errf("missing )")
		}
		return v, nil
	case ch == '\'':
		return p.str()
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return p.number()
	case isNameStart(ch):
		name := p.name()
		switch name {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		}
		if p.eat("(") {
			return nil, fmt.Errorf("%w: %s", ErrUnsupported, p.errf("function %s()", name))
		}
		v, ok := p.c[name]
		if !ok {
			return nil, p.errf("unknown context %q", name)
		}
		return p.props(v)
	}
	return nil, p.errf("unexpected %q", p.src[p.i:])
}

// props follows .name and ['name'] after a context name.
func (p *parser) props(v any) (any, error) {
	for {
		var key string
		switch {
		case p.i < len(p.src) && p.src[p.i] == '.':
			p.i++
			if p.i >= len(p.src) || !isNameStart(p.src[p.i]) {
				return nil, p.errf("property name expected")
			}
			key = p.name()
		case p.i < len(p.src) && p.src[p.i] == '[':
			p.i++
			p.space()
			if p.i >= len(p.src) || p.src[p.i] != '\'' {
				return nil, fmt.Errorf("%w: %s", ErrUnsupported, p.errf("index other than a string"))
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			if !p.eat("]") {
				return nil, p.errf("missing ]")
			}
			key = k
		default:
			return v, nil
		}
		v = property(v, key)
	}
}

// property looks a key up case-insensitively, as GitHub does.
func property(v any, key string) any {
	switch m := v.(type) {
	case map[string]any:
		for k, x := range m {
			if strings.EqualFold(k, key) {
				return x
			}
		}
	case map[string]string:
		for k, x := range m {
			if strings.EqualFold(k, key) {
				return x
			}
		}
	case Context:
		return property(map[string]any(m), key)
	}
	return nil
}

func isNameStart(ch byte) bool {
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
}

func (p *parser) name() string {
	start := p.i
	for p.i < len(p.src) {
		ch := p.src[p.i]
		if !isNameStart(ch) && ch != '-' && (ch < '0' || ch > '9') {
			break
		}
		p.i++
	}
	return p.src[start:p.i]
}

func (p *parser) str() (string, error) {
	var b strings.Builder
	p.i++ // opening '
	for p.i < len(p.src) {
		ch := p.src[p.i]
		p.i++
		if ch != '\'' {
			b.WriteByte(ch)
			continue
		}
		if p.i < len(p.src) && p.src[p.i] == '\'' { // '' is an escaped quote
			b.WriteByte('\'')
			p.i++
			continue
		}
		return b.String(), nil
	}
	return "", p.errf("unterminated string")
}

func (p *parser) number() (any, error) {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	for p.i < len(p.src) && strings.ContainsRune("0123456789.", rune(p.src[p.i])) {
		p.i++
	}
	f, err := strconv.ParseFloat(p.src[start:p.i], 64)
	if err != nil {
		return nil, p.errf("number %q", p.src[start:p.i])
	}
	return f, nil
}

// equal compares as GitHub does: strings case-insensitively, values of
// different types as numbers.
func equal(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return strings.EqualFold(as, bs)
	}
	if a == nil && b == nil {
		return true
	}
	ab, aok := a.(bool)
	bb, bok := b.(bool)
	if aok && bok {
		return ab == bb
	}
	return number(a) == number(b)
}

func number(v any) float64 {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		if strings.TrimSpace(x) == "" {
			return 0
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f
		}
	}
	return math.NaN()
}
