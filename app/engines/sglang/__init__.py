"""SGLang: log parser and (later) flag catalog and discovery patterns."""
