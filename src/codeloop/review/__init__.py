"""Reviews of a change (issue 40): what changed between two commits and which lines a pull
request touches (`changes`), the findings a review reports and the prompts that ask for them
(`findings`), and GitHub: the Actions run a review happens in (`actions`), its REST API
(`github`), the review posted once per head (`posting`) and the answer to an `@codeloop`
comment (`reply`). `codeloop review` (codeloop.cli.review_command) and the `/review` and
`/security-review` commands (codeloop.commands.review) use them; nothing here opens a
session."""
