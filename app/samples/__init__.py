"""Bundled sample logs (the demo placeholder and documentation examples)."""
