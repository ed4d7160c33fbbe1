"""The preference interface: the segment pool and pair selection, the labellers, the schedule.

    pool.py       SegmentPool: recent segments, pairs never asked before (random or by ensemble variance)
    oracle.py     SyntheticOracle: the labeller that compares true reward
    schedule.py   LabelSchedule: how many labels may have been asked by a given time
    process.py    the preference-interface process: segment_queue -> pairs -> labeller -> preference_queue

This package knows nothing of the policy; it sees segments, and (for variance queries) the reward
predictor's published weights.
"""
