"""What an editor's pickers offer for a session: the permission modes (`modes`, and the
`mode` config option) and the models (the `model` config option: ACP 0.12 has no
session/set_model)."""

from __future__ import annotations

from typing import Literal

from acp import schema

from codeloop.frontdoor import Conversation

MODE_NAMES = {
    "default": ("Default", "Asks before edits and commands"),
    "acceptEdits": ("Accept edits", "Edits in the project run without asking"),
    "plan": ("Plan", "Reads and plans; changes nothing"),
    "bypassPermissions": ("Bypass permissions", "Nothing is asked"),
    "auto": ("Auto", "A classifier decides what would be asked"),
    "dontAsk": ("Don't ask", "What would be asked is denied"),
}


def offered_modes(conversation: Conversation) -> list[str]:
    """The four every session has, auto where the settings allow it, and the current one."""
    offered = ["default", "acceptEdits", "plan", "bypassPermissions"]
    if conversation.session.config.policy.auto is not None:
        offered.append("auto")
    if conversation.mode not in offered:
        offered.append(conversation.mode)
    return offered


def mode_state(conversation: Conversation) -> schema.SessionModeState:
    return schema.SessionModeState(
        current_mode_id=conversation.mode,
        available_modes=[
            schema.SessionMode(id=m, name=MODE_NAMES[m][0], description=MODE_NAMES[m][1])
            for m in offered_modes(conversation)
        ],
    )


ConfigOption = schema.SessionConfigOptionSelect | schema.SessionConfigOptionBoolean


def config_options(conversation: Conversation) -> list[ConfigOption]:
    """The mode and the model, as selects (what current clients show instead of `modes`)."""
    modes = [
        schema.SessionConfigSelectOption(
            value=m, name=MODE_NAMES[m][0], description=MODE_NAMES[m][1]
        )
        for m in offered_modes(conversation)
    ]
    models = [
        schema.SessionConfigSelectOption(value=name, name=alias, description=name)
        for alias, name in conversation.model_choices()
    ]
    if conversation.model not in {m.value for m in models}:
        models.insert(
            0, schema.SessionConfigSelectOption(value=conversation.model, name=conversation.model)
        )
    return [
        _select("mode", "Mode", conversation.mode, modes),
        _select("model", "Model", conversation.model, models),
    ]


def _select(
    key: Literal["mode", "model"],
    name: str,
    current: str,
    options: list[schema.SessionConfigSelectOption],
) -> schema.SessionConfigOptionSelect:
    return schema.SessionConfigOptionSelect(
        type="select", id=key, name=name, category=key, current_value=current, options=options
    )
