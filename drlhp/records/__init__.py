"""The run's files: where each lives in a run directory (``run_paths``), the run's record (``run_record``: config,
status, summary), the one file format (``npz_json``: npz arrays and JSON meta), atomic writes (``atomic``; a stop
waits for a write to end), metrics (``metrics``: TensorBoard and progress.csv), a run's curves (``curves``) and
durations as text (``formatting``). Plain files and numpy: no process, no channel, no config (drlhp.processes, above,
writes through it).
"""
