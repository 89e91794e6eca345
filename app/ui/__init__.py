"""The Textual dashboard: renders Watch snapshots, sends intents back."""
