"""The run archive over run directories (list, show, rerun, compare, seeds).

Arrives with step 5; run directories already record what it will read (drlhp/run_record.py).
"""
