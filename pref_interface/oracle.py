"""The synthetic labeller: prefers the segment with the larger sum of true (unclipped) env reward.

Christiano et al. (2017), section 3.1: "the synthetic labeller ... simply prefers the segment with
higher reward according to the task's true reward". Equal sums: (0.5, 0.5). With --oracle_goal the same loop
labels by a goal instead (pref_interface/goal_oracle.py). Either answers through a Teacher
(pref_interface/teacher.py): the oracle's own answers, or with --oracle_mistake_rate / --oracle_equal_threshold
B-Pref's imperfect teachers, seeded by --seed, what they changed counted in the interface's metrics.
"""
from __future__ import annotations

from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Segment


class SyntheticOracle:
    name = "synthetic"

    def score(self, segment: Segment) -> float:
        return float(segment.true_return)

    def label(self, segment_1: Segment, segment_2: Segment) -> tuple[float, float] | None:
        r1, r2 = segment_1.true_return, segment_2.true_return
        if r1 > r2:
            return MU_LEFT
        if r2 > r1:
            return MU_RIGHT
        return MU_EQUAL


def label_with_oracle(iface, log=print) -> dict:
    """--labeller oracle: a plain loop until the stop event (``iface.ports``): segments in, a pair out, the
    oracle's answer sent (blocking: the predictor takes every preference), figures logged: the synthetic oracle's
    answer, or with --oracle_goal the goal oracle's (goal_oracle.py). The status ports (the predictor's version,
    the database's size, the agent's episode) are for a person; it reads none."""
    import time

    cfg = iface.cfg
    if cfg.prefs.oracle_goal:  # a behaviour the env does not reward (--oracle_goal, issue 30)
        from pref_interface.goal_oracle import goal_oracle_for, reads_atari

        oracle = goal_oracle_for(cfg.prefs.oracle_goal, cfg.env)
        read = ("the clips' RAM and rewards" if reads_atari(oracle.goal)
                else f"observations split at {oracle.obs_dim}")
        log(f"[prefs] the oracle labels by {oracle.name} ({read})", flush=True)
    else:
        oracle = SyntheticOracle()
    from pref_interface.teacher import Teacher, teacher_rng

    teacher = Teacher(oracle, cfg.prefs.oracle_mistake_rate, cfg.prefs.oracle_equal_threshold, teacher_rng(cfg.seed))
    if teacher.mistake_rate or teacher.equal_threshold:
        log(f"[prefs] an imperfect teacher (B-Pref): {teacher.name}", flush=True)
    stop_event = iface.ports.stop_event
    while not stop_event.is_set():
        iface.receive_segments()
        pair = iface.next_pair()
        if pair is None:
            time.sleep(0.02)
        else:
            iface.send(pair, teacher.label(*pair))
        iface.maybe_log({f"prefs/{k}": v for k, v in teacher.figures().items()})
    return teacher.figures()
