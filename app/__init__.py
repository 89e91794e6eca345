"""sgwatch: watch an SGLang or vLLM server warm up and serve, from a terminal."""

__version__ = "0.1.0"
