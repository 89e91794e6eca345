"""Pure core: no terminal UI, no SSH, no I/O (a test enforces it)."""
