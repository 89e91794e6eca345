"""One watched host (session) and one watched server (watch): bytes in, state out."""
