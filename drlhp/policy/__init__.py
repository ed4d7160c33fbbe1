"""The policy's role: one training loop (``loop``) that knows no algorithm, each algorithm a folder that fills it
(``a2c/``, ``ppo/``), the one table that picks an algorithm for --algo and the env's action kind (``algorithms``), and
the shared parts: the discrete algorithms' network and rollout loop, the reward it is paid, segments, checkpoints,
its process.
"""
