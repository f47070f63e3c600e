"""A stock TFX pipeline, the end-to-end benchmark's baseline (bench/e2e_bench.py)."""
