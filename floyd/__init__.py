"""The run archive over run directories: list, show, rerun, compare, seeds (``python -m floyd``).

    floyd/index.py   a run directory -> a record (or a note on why it is not one)
    floyd/plots.py   the compare figure of several runs (a run's own curves.png: drlhp/records/curves.py)
    floyd/rerun.py   a run again, from its recorded code version and command
    floyd/seeds.py   one run.py command with N seeds in parallel, and a table of the results
    floyd/__main__.py  the command line

Reads what drlhp/records/run_record.py writes; never imports TensorFlow.
"""
