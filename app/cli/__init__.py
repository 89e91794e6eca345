"""The commands: one module per command; exitcodes.py is the one table of exit statuses."""
