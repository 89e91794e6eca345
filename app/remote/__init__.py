"""Small scripts sent to the host over stdin (nothing is installed there)."""
