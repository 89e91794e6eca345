"""The simulated `vllm serve` (V1, 0.11.0): its flags, start-up, tagged log records,
HTTP endpoints, /metrics page and the 10 s stats lines."""
