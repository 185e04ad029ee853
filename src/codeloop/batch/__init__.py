"""Many tasks, each headless in its own workspace: `codeloop batch`, locally or on Ray."""
