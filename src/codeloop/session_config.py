"""A session's settings, in a module of their own: the session and what runs beside it (its
sub-agents, through the host they are typed against) read them without importing the session.
"""

from __future__ import annotations

from dataclasses import field, replace

from codeloop.context.environment import Environment
from codeloop.models.retry import RetryPolicy
from codeloop.permissions.policy import Policy
from codeloop.system.valueclass import valueclass

# Claude Code's turn limit for a sub-agent (seed 002): a runaway one ends with a clear result.
DEFAULT_SUBAGENT_MAX_TURNS = 200
# The turn limit of local models and models the catalog does not know, unless --max-turns or
# the maxTurns setting sets one: a weak model can wander for ever (Claude's has none).
DEFAULT_UNKNOWN_MODEL_MAX_TURNS = 50


@valueclass
class SessionConfig:
    model: str
    system: str
    max_tokens: int
    # The model's largest output: the loop escalates to it once when an answer is cut short.
    max_output_tokens: int | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    fallback_model: str | None = None
    # Output tokens a task may use; a `+500k` marker in a prompt overrides it for that prompt.
    token_budget: int | None = None
    # Tokens the task may take, told to the model in each main request (--task-budget).
    task_budget: int | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    policy: Policy = field(default_factory=Policy)
    # How the session began, as SessionStart hooks see it: startup, resume or fork.
    start_source: str = "startup"
    # A sub-agent's turn limit, unless its agent definition sets its own (maxTurns).
    subagent_max_turns: int = DEFAULT_SUBAGENT_MAX_TURNS
    # opusplan: (the model while in plan mode, the model otherwise); each prompt runs on the
    # one for the mode it starts in, so an accepted plan is carried out on the second.
    mode_models: tuple[str, str] | None = None
    # What the builder gathered for the system prompt (git state included): a custom agent's
    # prompt describes the same environment without probing it again.
    environment: Environment | None = None
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()

    def for_mode(self) -> SessionConfig:
        """The config on the model for the permission mode it is in now (opusplan)."""
        if self.mode_models is None:
            return self
        model = self.mode_models[0 if self.policy.mode == "plan" else 1]
        return self if model == self.model else replace(self, model=model)
