"""`codeloop acp`: editors (Zed, JetBrains, Neovim, Emacs...) drive codeloop through the Agent
Client Protocol, over the official SDK (`acp`). Only `codeloop acp` imports this package: the
SDK and pydantic stay out of every other mode's start-up."""
