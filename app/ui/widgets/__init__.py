"""Dashboard widgets; each renders one part of a Watch."""
