"""Progress lines, on a terminal or in a log: the writer (`console.py`), a run's steps
(`steps.py`) and a model's training (`training.py`)."""
