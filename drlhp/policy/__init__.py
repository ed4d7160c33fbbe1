"""The policy's role: its networks, A2C, rollouts, the reward it is paid, segments, checkpoints, its trainer and
its process.
"""
