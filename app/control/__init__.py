"""Actions that go back to the host: restart, benchmark."""
