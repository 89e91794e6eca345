"""What both simulated engines share: simulated time, the process and its titled
children, the GPUs and the nvidia-smi stand-in, HTTP, the log's streams, the model
guesses, the continuous-batching scheduler, tqdm frames."""
