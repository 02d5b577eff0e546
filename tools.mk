# tools.mk — tools the tests need beyond Go; included by the Makefile.
#
# The engine CLIs are pinned in tools/<tool>/package-lock.json and installed
# project-locally (node_modules is git-ignored): Claude Code, the OpenAI
# Codex CLI and the Gemini CLI. Tests find them at CLAUDE_BIN, CODEX_BIN and
# GEMINI_BIN (internal/testrig/claudetest) and skip without them unless
# MENTION_RUNNER_REQUIRE_CLAUDE=1 / MENTION_RUNNER_REQUIRE_ENGINES=1.

NPM ?= npm
NPM_REGISTRY := https://registry.npmjs.org/
CLAUDE_CODE_DIR := $(CURDIR)/tools/claude-code
CLAUDE_BIN := $(CLAUDE_CODE_DIR)/node_modules/.bin/claude
CODEX_DIR := $(CURDIR)/tools/codex
CODEX_BIN := $(CODEX_DIR)/node_modules/.bin/codex
GEMINI_DIR := $(CURDIR)/tools/gemini-cli
GEMINI_BIN := $(GEMINI_DIR)/node_modules/.bin/gemini

.PHONY: claude-code codex gemini-cli engines lockcheck

claude-code: $(CLAUDE_BIN)
codex: $(CODEX_BIN)
gemini-cli: $(GEMINI_BIN)
engines: claude-code codex gemini-cli

# Reinstall only when the binary is missing or older than the lockfile.
# npm keeps the package's own file times, so touch the binary afterwards.
# npm ci runs no install scripts of dependencies it has not been told to
# allow, and the CLIs need none (Codex's native binary comes as an
# optional dependency for the platform).
$(CLAUDE_BIN): $(CLAUDE_CODE_DIR)/package-lock.json | lockcheck
	$(NPM) ci --prefix $(CLAUDE_CODE_DIR) --no-audit --no-fund
	touch $@

$(CODEX_BIN): $(CODEX_DIR)/package-lock.json | lockcheck
	$(NPM) ci --prefix $(CODEX_DIR) --no-audit --no-fund
	touch $@

$(GEMINI_BIN): $(GEMINI_DIR)/package-lock.json | lockcheck
	$(NPM) ci --prefix $(GEMINI_DIR) --no-audit --no-fund
	touch $@

# No lockfile (the tests' and the agent job's, tools/workflow/*) may
# download from anywhere but the npm registry (they
# normally record no addresses at all, so npm uses the configured registry).
lockcheck:
	@bad=$$(grep -oE '"(resolved|tarball)": *"[^"]*"' $(CLAUDE_CODE_DIR)/package-lock.json \
	  $(CODEX_DIR)/package-lock.json $(GEMINI_DIR)/package-lock.json \
	  $(CURDIR)/tools/workflow/*/package-lock.json \
	  | grep -vF '"$(NPM_REGISTRY)' || true); \
	if [ -n "$$bad" ]; then \
	  echo "a tools/*/package-lock.json or tools/workflow/*/package-lock.json downloads from outside $(NPM_REGISTRY):"; \
	  echo "$$bad"; exit 1; \
	fi
