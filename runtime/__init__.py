"""What every process uses: its set-up, the one call every entry point makes first
(`startup.py`, `process.py`, `lazy_imports.py`), files and buckets (`storage.py`), where a
run's files live (`run_layout.py`), Beam on this machine (`beam.py`), and the progress
lines (`progress/`). It imports nothing else of the project's."""
