"""System metrics: CPU, RAM, GPU/VRAM and loaded models sampled during a run."""
