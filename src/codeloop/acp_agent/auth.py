"""Keys, as an editor asks for them: the variables codeloop reads (ACP's env_var auth
methods), and the `auth_required` error that makes the editor offer to set one when a
session cannot start without it."""

from __future__ import annotations

import os

from acp import RequestError, schema

from codeloop.errors import NoCredentials

# The variables a provider's key is read from (the clouds use their own credentials).
KEYS = {
    "ANTHROPIC_API_KEY": "Anthropic API key",
    "ANTHROPIC_AUTH_TOKEN": "Anthropic auth token",
    "OPENAI_API_KEY": "OpenAI API key",
    "OPENAI_BASE_URL": "OpenAI-compatible server URL",
}


def auth_methods(
    variables: tuple[str, ...] = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
) -> list[schema.EnvVarAuthMethod]:
    """One method a variable: setting it in the agent's environment is the way in."""
    return [
        schema.EnvVarAuthMethod(
            type="env_var",
            id=variable.lower().replace("_", "-"),
            name=KEYS.get(variable, variable),
            description=f"Set {variable} in the environment the editor starts codeloop with",
            vars=[
                schema.AuthEnvVar(
                    name=variable, label=KEYS.get(variable), secret="URL" not in variable
                )
            ],
        )
        for variable in variables
    ]


def auth_required(missing: NoCredentials) -> RequestError:
    return RequestError.auth_required(
        {
            "message": str(missing).splitlines()[0],
            "authMethods": [
                m.model_dump(by_alias=True, exclude_none=True)
                for m in auth_methods(missing.variables)
            ],
        }
    )


def authenticated(method_id: str) -> None:
    """`authenticate`: the method's variable is set now (the editor restarted codeloop with
    it), else auth_required again."""
    methods = {m.id: m for m in auth_methods(tuple(KEYS))}
    method = methods.get(method_id)
    if method is None:
        message = f"no authentication method {method_id!r} (methods: {', '.join(methods)})"
        raise RequestError(-32602, f"Invalid params: {message}", {"message": message})
    variable = method.vars[0].name
    if not os.environ.get(variable):
        raise RequestError.auth_required(
            {"message": f"{variable} is not set in codeloop's environment"}
        )
