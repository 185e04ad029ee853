# Sourced by action.yml's steps: codeloop's venv first on this step's PATH (not the job's), and
# the action's inputs as codeloop's environment and flags. An empty input sets nothing, so
# codeloop's own defaults (and the settings) apply.
if [ -n "${CODELOOP_VENV:-}" ]; then export PATH="$CODELOOP_VENV/bin:$PATH"; fi
set_if() { if [ -n "$2" ]; then export "$1=$2"; fi; }
set_if CODELOOP_MODEL "${INPUT_MODEL:-}"
set_if ANTHROPIC_API_KEY "${INPUT_ANTHROPIC_API_KEY:-}"
set_if OPENAI_API_KEY "${INPUT_OPENAI_API_KEY:-}"
set_if OPENAI_BASE_URL "${INPUT_OPENAI_BASE_URL:-}"
set_if GITHUB_TOKEN "${INPUT_GITHUB_TOKEN:-}"
flags=()
if [ -n "${INPUT_PROMPT:-}" ]; then flags+=(--append-system-prompt "$INPUT_PROMPT"); fi
if [ -n "${INPUT_ALLOWED_TOOLS:-}" ]; then flags+=(--allowedTools "$INPUT_ALLOWED_TOOLS"); fi
if [ -n "${INPUT_SETTINGS:-}" ]; then flags+=(--settings "$INPUT_SETTINGS"); fi
