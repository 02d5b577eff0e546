# tools.mk — tools the tests need beyond Go; included by the Makefile.
#
# Claude Code is pinned in tools/claude-code/package-lock.json and installed
# project-locally (node_modules is git-ignored). Tests find it at CLAUDE_BIN
# (internal/claudetest) and skip without it unless
# MENTION_RUNNER_REQUIRE_CLAUDE=1.

NPM ?= npm
CLAUDE_CODE_DIR := $(CURDIR)/tools/claude-code
CLAUDE_BIN := $(CLAUDE_CODE_DIR)/node_modules/.bin/claude
NPM_REGISTRY := https://registry.npmjs.org/

.PHONY: claude-code claude-code-lockcheck

claude-code: $(CLAUDE_BIN)

# Reinstall only when the binary is missing or older than the lockfile.
# npm keeps the package's own file times, so touch the binary afterwards.
$(CLAUDE_BIN): $(CLAUDE_CODE_DIR)/package-lock.json | claude-code-lockcheck
	$(NPM) ci --prefix $(CLAUDE_CODE_DIR) --no-audit --no-fund
	touch $@

# The lockfile must not download from anywhere but the npm registry (it
# normally records no addresses at all, so npm uses the configured registry).
claude-code-lockcheck:
	@bad=$$(grep -oE '"(resolved|tarball)": *"[^"]*"' $(CLAUDE_CODE_DIR)/package-lock.json \
	  | grep -vF '"$(NPM_REGISTRY)' || true); \
	if [ -n "$$bad" ]; then \
	  echo "tools/claude-code/package-lock.json downloads from outside $(NPM_REGISTRY):"; \
	  echo "$$bad"; exit 1; \
	fi
