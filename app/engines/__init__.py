"""Engine-specific knowledge: log formats, flags, process patterns."""
