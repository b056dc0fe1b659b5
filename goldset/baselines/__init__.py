"""Reference systems that need no LLM, so every user can get a first run and a baseline for relative gates."""
