"""The runtime every role shares: the launcher, queues and messages between processes, the run record, metrics,
atomic files, profiling, output tee, the CPU (cpu.py) and TensorFlow set-up.
"""
